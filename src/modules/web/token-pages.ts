import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import type { Scope } from "../../principal";
import type { AppError } from "../../http/errors";
import { iso } from "../../lib/clock";
import { redirectWithFlash, secretCard, takeFlash, type OneTimeFlash } from "../../web/flash";
import { html, page, raw, type Html } from "../../web/html";
import { csrfField, flashFrom, layout, when } from "../../web/layout";
import { pageMacros, type RefusalPage } from "../../web/macros";
import type { WebSession } from "../../web/session";
import { describeAccount } from "../accounts/service";
import { recentNotes } from "../notes/repo";
import { DEFAULT_EXPIRY_DAYS, listWorkspaceTokens, MAX_EXPIRY_DAYS, mintExtensionToken, mintToken, revokeWorkspaceToken, SCOPES, TOKEN_NAME_MAX } from "../tokens/service";
import { getWorkspace } from "../workspaces/repo";
import { fieldProblems, firstValue, formFields } from "./form";
import {
  chosen,
  describedBy,
  distinct,
  fieldProblem,
  FORM_FIELD,
  formProblem,
  formState,
  invalid,
  refusedStatus,
  refuseFields,
  sentence,
  typed,
  WHOLE_FORM,
  type FormState,
} from "./settings-forms";

const TOKENS = "/settings/tokens";

/** The secrets this page shows once, by the kind its flash names. */
const SECRETS: Record<string, { id: string; label: string; note: string }> = {
  token: { id: "new-token", label: "New API token", note: "This token is shown only this once. Use it as Authorization: Bearer <token>." },
  "extension-token": { id: "ext-token", label: "Browser-extension token", note: "Paste this into the browser extension. It is shown only this once." },
};

interface View {
  flash: OneTimeFlash;
  form?: FormState;
}

type RecentNote = Awaited<ReturnType<typeof recentNotes>>[number];

function noteOptions(recent: RecentNote[], streamsOnly: boolean, selected: string): Html {
  const rows = recent.filter((n) => !streamsOnly || n.kind === "stream");
  return html`${rows.map((n) => html`<option value="${n.id}" ${n.id === selected ? raw("selected") : ""}>${n.filename ?? n.title}</option>`)}`;
}

function newTokenForm(s: WebSession, recent: RecentNote[], state: FormState | undefined): Html {
  const f = "token";
  return html`${formProblem(state, f)}<form method="post" action="${TOKENS}">${csrfField(s)}
  <label><span>Name</span><input type="text" name="name" maxlength="${TOKEN_NAME_MAX}" placeholder="e.g. deploy pipeline" value="${typed(state, f, "name", "")}"${invalid(state, f, "name")}>${fieldProblem(state, f, "name")}</label>
  <fieldset class="group scopes"${describedBy(state, f, "scope")}><legend>Scopes</legend><div class="row">${SCOPES.map(
    (sc) =>
      html`<label class="check"><input type="checkbox" name="scope" value="${sc}" ${chosen(state, f, "scope", sc, sc === "append") ? raw("checked") : ""}${state?.form === f && state.errors.scope ? raw(' aria-invalid="true"') : ""}> ${sc}</label>`,
  )}</div>${fieldProblem(state, f, "scope")}
  <p class="muted small">read: list and read notes · write: create, edit, delete, move and append · append: append only</p></fieldset>
  <label><span>Only this note (optional)</span><select name="note_id"${invalid(state, f, "note_id")}><option value="">Every note</option>${noteOptions(recent, false, typed(state, f, "note_id", ""))}</select>${fieldProblem(state, f, "note_id")}</label>
  <label><span>Expires in (days, at most ${MAX_EXPIRY_DAYS})</span><input type="number" name="expires_in_days" min="1" max="${MAX_EXPIRY_DAYS}" value="${typed(state, f, "expires_in_days", String(DEFAULT_EXPIRY_DAYS))}"${invalid(state, f, "expires_in_days")}>${fieldProblem(state, f, "expires_in_days")}</label>
  <button class="primary">Create token</button></form>`;
}

async function tokensTable(deps: Deps, s: WebSession): Promise<Html> {
  const rows = await listWorkspaceTokens(deps, s.workspaceId);
  if (rows.length === 0) return html`<p class="muted">None yet.</p>`;
  const now = deps.clock.now();
  const noteNames = new Map((await recentNotes(deps, s.workspaceId, 500)).map((n) => [n.id, n.filename ?? n.title]));
  const names = distinct(
    rows.map((t) => t.name || (t.kind === "extension" ? "browser extension" : "unnamed token")),
    rows.map((t) => t.id),
  );
  return html`<table class="cards tokens"><thead><tr><th>Name</th><th>Scopes</th><th>Note</th><th>Last used</th><th>Expires</th><th><span class="sr-only">Action</span></th></tr></thead><tbody>${rows.map((t, i) => {
    const state = t.revokedAt !== null ? "revoked" : t.expiresAt <= now ? "expired" : "active";
    return html`<tr><td data-label="Name">${t.name || html`<span class="muted">unnamed</span>`}${t.kind === "extension" ? html`<span class="badge">extension</span>` : ""}<div class="muted small mono">${t.id}</div></td><td data-label="Scopes">${t.scopes}</td><td data-label="Note" class="small">${
      t.noteId === null ? "all" : (noteNames.get(t.noteId) ?? t.noteId)
    }</td><td data-label="Last used">${when(t.lastUsedAt === null ? null : iso(t.lastUsedAt))}</td><td data-label="Expires">${when(iso(t.expiresAt))}</td><td data-label="">${
      state === "active"
        ? html`<form method="post" action="${TOKENS}/${t.id}/revoke">${csrfField(s)}<button class="danger" aria-label="Revoke ${names[i]!}">Revoke</button></form>`
        : html`<span class="badge">${state}</span>`
    }</td></tr>`;
  })}</tbody></table>`;
}

async function tokensPage(deps: Deps, s: WebSession, view: View, status = 200, headers: Record<string, string> = {}): Promise<Response> {
  const ws = await getWorkspace(deps, s.workspaceId);
  const account = await describeAccount({ ctx: s.ctx });
  const subscriber = ws.plan !== "free" && ws.state === "active";
  const shown = view.flash.secret ? SECRETS[view.flash.secret.kind] : undefined;
  const state = view.form;
  // The notes the forms offer, read only when a form is shown.
  const recent = account.api_access || subscriber ? await recentNotes(deps, s.workspaceId, 200) : [];
  const table = await tokensTable(deps, s);
  return page(
    layout({
      title: "API tokens",
      session: s,
      active: "tokens",
      flash: view.flash,
      body: html`<h1>API tokens</h1>${shown ? secretCard(shown.id, shown.label, view.flash.secret!.value, shown.note) : ""}
<div class="card"><h2>New token</h2>${
        account.api_access
          ? newTokenForm(s, recent, state)
          : html`<p>The ${account.plan} plan has no API access. Start the API trial on the <a href="/settings">account page</a>, or move to Dev or Team.</p>`
      }</div>
<div class="card"><h2>Your tokens</h2>${formProblem(state, "revoke")}${table}</div>
<div class="card"><h2>Browser-extension token</h2>${
        subscriber
          ? html`<p class="small">One append-only token for the browser extension, bound to one stream (60 appends a minute, outside the token cap). A new one replaces the old.</p>
  ${formProblem(state, "extension")}<form method="post" action="/settings/extension-token" class="row">${csrfField(s)}<label class="grow"><span>Stream</span><select name="note_id" required${invalid(state, "extension", "note_id")}>${noteOptions(recent, true, typed(state, "extension", "note_id", ""))}</select>${fieldProblem(state, "extension", "note_id")}</label><button>Create extension token</button></form>`
          : html`<p class="muted small">For subscribers: available on paid plans.</p>`
      }</div>`,
    }),
    status,
    headers,
  );
}

/** The new-token form's fields, checked and worded here; what the plan allows is the service's to say. */
function readTokenForm(body: unknown): { name: string; scopes: Scope[]; noteId: string | null; days: number } {
  const b = formFields(body);
  const name = firstValue(b.name).trim();
  const scopes = ([] as string[]).concat(b.scope ?? []).filter((x): x is Scope => (SCOPES as readonly string[]).includes(x));
  const daysText = firstValue(b.expires_in_days).trim();
  const days = daysText === "" ? DEFAULT_EXPIRY_DAYS : Number(daysText);
  refuseFields({
    name: name.length > TOKEN_NAME_MAX && `A name of at most ${TOKEN_NAME_MAX} characters.`,
    scope: scopes.length === 0 && "Choose at least one scope.",
    expires_in_days: !(Number.isInteger(days) && days >= 1 && days <= MAX_EXPIRY_DAYS) && `Enter a whole number of days from 1 to ${MAX_EXPIRY_DAYS}.`,
  });
  return { name, scopes: [...new Set(scopes)], noteId: firstValue(b.note_id) || null, days };
}

/** The service's refusals said for this page's forms. */
function explain(form: string, e: AppError): Record<string, string> {
  const own = fieldProblems(e).filter((p) => p.code === FORM_FIELD);
  if (own.length) return Object.fromEntries(own.map((p) => [p.field, p.message]));
  if (e.code === "not_found" && form === "token") return { note_id: "That note is no longer in this workspace: choose another, or every note." };
  if (e.code === "not_found" && form === "extension") return { note_id: "That stream is no longer in this workspace: choose another." };
  if (e.code === "not_found" && form === "revoke") return { [WHOLE_FORM]: "That token is not in this workspace (any more)." };
  if (e.code === "bad_request" && form === "extension") return { note_id: "Choose a stream: the extension appends lines, which editable notes do not take." };
  if (e.code === "cap_exceeded") {
    const { limit, used } = e.details as { limit: number; used: number };
    return {
      [WHOLE_FORM]:
        limit === 0
          ? "This plan has no API access, so it gets no API tokens. Start the API trial on the account page, or move to Dev or Team."
          : `Your plan allows ${limit} active API tokens and ${used} are active: revoke one below to make room.`,
    };
  }
  if (e.code === "plan_required") return { [WHOLE_FORM]: "The browser-extension token is for active subscribers: available on paid plans." };
  return { [WHOLE_FORM]: sentence(e.message) };
}

const refusedOn =
  (deps: Deps, form: string): RefusalPage =>
  (e, { s, body }) => {
    if (!s) return undefined;
    const state = formState(form, body, explain(form, e));
    return tokensPage(deps, s, { flash: {}, form: state }, refusedStatus(state, e), e.headers);
  };

/** API tokens: the list, a new token (shown once, after a redirect), revoking one, and the browser-extension token. */
export const tokenPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .get(
      TOKENS,
      ({ s, request }) => {
        const { flash, headers } = takeFlash(deps, s, request);
        return tokensPage(deps, s, { flash: { ...flashFrom(new URL(request.url)), ...flash } }, 200, headers);
      },
      { session: "page" },
    )
    .post(
      TOKENS,
      async ({ s, body }) => {
        const input = readTokenForm(body);
        const minted = await deps.writer.write(() =>
          mintToken(deps, { accountId: s.account.id, workspaceId: s.workspaceId, scopes: input.scopes, noteId: input.noteId, expiresInDays: input.days, name: input.name }),
        );
        return redirectWithFlash(deps, s, TOKENS, { ok: input.name ? `Token “${input.name}” created.` : "Token created.", secret: { kind: "token", value: minted.token } });
      },
      { session: "form", refused: refusedOn(deps, "token") },
    )
    .post(
      `${TOKENS}/:id/revoke`,
      async ({ s, params }) => {
        await deps.writer.write(() => revokeWorkspaceToken(deps, s.workspaceId, params.id));
        return redirectWithFlash(deps, s, TOKENS, { ok: "Token revoked: it answers 401 from now on." });
      },
      { session: "form", refused: refusedOn(deps, "revoke") },
    )
    .post(
      "/settings/extension-token",
      async ({ s, body }) => {
        const noteId = firstValue(formFields(body).note_id);
        refuseFields({ note_id: !noteId && "Choose the stream the extension appends to." });
        const minted = await deps.writer.write(() => mintExtensionToken(deps, { accountId: s.account.id, workspaceId: s.workspaceId, noteId }));
        return redirectWithFlash(deps, s, TOKENS, { ok: "Browser-extension token created; the previous one, if any, stopped working.", secret: { kind: "extension-token", value: minted.token } });
      },
      { session: "form", refused: refusedOn(deps, "extension") },
    );
