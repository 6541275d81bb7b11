// The inbox template's card on a stream's settings page, and its form: Save, or Preview, which
// draws the page again with the typed template rendered against the last payload received. A
// plain form: it works without script, under the page's Content-Security-Policy as it is.
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { ValidationFailed } from "../../http/errors";
import { redirectWithFlash } from "../../web/flash";
import { html, type Html } from "../../web/html";
import { csrfField, when } from "../../web/layout";
import { pageMacros, type RefusalPage } from "../../web/macros";
import type { WebSession } from "../../web/session";
import { previewLastPayload } from "../inbox/preview";
import { MAX_TEMPLATE_CHARS, templateProblem } from "../inbox/template/compile";
import type { NoteRow } from "../notes/repo";
import { updateNote } from "../notes/service";
import { firstValue, formFields } from "./form";
import { fieldProblem, formProblem, formState, invalid, problemOf, refuseFields, sentence, typed, type FormState } from "./settings-forms";

const FORM = "inbox-template";
const FIELD = "inbox_template";

/** The last payload's line with this template, or null: none kept, or the template does not parse. */
async function lastPayloadLine(s: WebSession, note: NoteRow, template: string) {
  try {
    return await previewLastPayload({ ctx: s.ctx, note, template: template.trim() ? template : null });
  } catch (e) {
    if (e instanceof ValidationFailed) return null;
    throw e;
  }
}

export async function inboxTemplateCard(s: WebSession, note: NoteRow, state: FormState | undefined): Promise<Html> {
  const template = typed(state, FORM, FIELD, note.inboxTemplate ?? "");
  const preview = problemOf(state, FORM, FIELD) ? null : await lastPayloadLine(s, note, template);
  return html`<div class="card" id="inbox-template"><h2>Inbox line template</h2>
  <p class="small">Write the line each payload becomes, with <code>{{ path }}</code> placeholders into its JSON (<code>alerts[0].labels.alertname</code>, <code>data.object.amount</code>) and filters (<code>| default "x"</code>, <code>| upper</code>, <code>| lower</code>, <code>| join ", "</code>, <code>| count</code>, <code>| truncate N</code>), e.g. <code>{{ status | upper }} {{ commonLabels.alertname }}: {{ alerts | count }} alerts</code>. Empty: the built-in summary.</p>
  ${formProblem(state, FORM)}
  <form method="post" action="/notes/${note.id}/inbox/template">${csrfField(s)}
    <label><span>Template</span><textarea name="${FIELD}" rows="3" maxlength="${MAX_TEMPLATE_CHARS}"${invalid(state, FORM, FIELD)}>${template}</textarea>${fieldProblem(state, FORM, FIELD)}</label>
    <div class="row"><button class="primary">Save template</button><button name="preview" value="yes">Preview</button></div>
  </form>
  ${
    preview
      ? html`<h3 class="small muted">The last payload (received ${when(preview.received_at)}) with this template</h3><p class="small mono" id="inbox-template-preview">${preview.line}</p>`
      : html`<p class="muted small">The preview shows the last payload the inbox received with this template: none is kept yet.</p>`
  }
</div>`;
}

/** The template as typed, refused beside its field when it does not parse. */
function checkedTemplate(body: unknown): string {
  const template = firstValue(formFields(body)[FIELD]);
  const problem = template.trim() ? templateProblem(template, FIELD) : null;
  refuseFields({ [FIELD]: problem && sentence(problem.message) });
  return template;
}

/**
 * POST /notes/:id/inbox/template: saves (a redirect), or with `preview=yes` shows the page again
 * with the template as typed and its preview. `page` draws the settings page with a form's state;
 * `refused` is the page's own refusal (the form again, its problem beside the field).
 */
export const inboxTemplatePages = (deps: Deps, o: { page: (s: WebSession, noteId: string, form: FormState) => Promise<Response>; refused: RefusalPage }) =>
  new Elysia().use(pageMacros(deps)).post(
    "/notes/:id/inbox/template",
    async ({ s, params, body }) => {
      const template = checkedTemplate(body);
      if (firstValue(formFields(body).preview) === "yes") return o.page(s, params.id, formState(FORM, body, {}));
      const removed = !template.trim();
      await updateNote({ ctx: s.ctx, id: params.id, input: { inbox_template: removed ? null : template } });
      return redirectWithFlash(deps, s, `/notes/${params.id}/settings`, {
        ok: removed ? "Template removed: payloads get the built-in summary." : "Template saved: the next payload gets its line.",
      });
    },
    { session: "form", refused: o.refused },
  );
