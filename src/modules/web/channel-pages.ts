// The Channels page's routes: the page, and its forms (add, edit or re-enable, send a test,
// delete), each answered with a redirect, or the page again with the refused form's problems in
// place. The page itself is drawn in channels-view.ts.
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import type { AppError } from "../../http/errors";
import { redirectWithFlash, takeFlash } from "../../web/flash";
import { flashFrom } from "../../web/layout";
import { pageMacros, type RefusalPage } from "../../web/macros";
import type { ChannelInput } from "../channels/model";
import { createChannel, deleteChannel, getChannel, testChannel, updateChannel } from "../channels/service";
import type { WebhookFormat } from "../webhooks/formats";
import { CHANNELS, channelsPage, editForm, type ChannelsSection } from "./channels-view";
import { digestsSection } from "./digests-view";
import { fieldProblems, firstValue, formFields, type FormBody } from "./form";
import { limit } from "./limits";
import { FORM_FIELD, formState, refusedStatus, sentence, WHOLE_FORM } from "./settings-forms";

/** The sections drawn below the channels by other files. */
const SECTIONS: ChannelsSection[] = [digestsSection];

const FIELDS = new Set(["name", "url", "format"]);

/** The service's refusals said beside the field they are about: a bad URL's own message under the URL. */
function explain(e: AppError): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const p of fieldProblems(e)) {
    const field = p.code === FORM_FIELD ? p.field : p.field.replace(/^channel\./, "");
    errors[FIELDS.has(field) ? field : WHOLE_FORM] = p.code === FORM_FIELD ? p.message : sentence(p.message.replace(/^url /, "The URL "));
  }
  if (Object.keys(errors).length) return errors;
  if (e.code === "conflict") return { name: sentence(e.message) };
  if (e.code === "not_found") return { [WHOLE_FORM]: "That channel is not in this workspace (any more)." };
  if (e.code === "account_read_only") return { [WHOLE_FORM]: "This account is read-only: its channels can be read, not changed." };
  return { [WHOLE_FORM]: sentence(e.message) };
}

/** A refused form of the page (a digest's too, with its own wording): the page again, the form as it was posted, its problems in place. */
export const refusedOn =
  (deps: Deps, form: (params: Record<string, string>) => string, say: (e: AppError) => Record<string, string> = explain): RefusalPage =>
  (e, { s, params, body }) => {
    if (!s) return undefined;
    const state = formState(form(params), body, say(e));
    return channelsPage(deps, s, { flash: {}, form: state }, SECTIONS, refusedStatus(state, e), e.headers);
  };

const isHttp = (url: string) => /^https?:/i.test(url);

/** The posted fields as a change: a field left out is kept; the format goes along only where it applies. */
function channelInput(b: FormBody, webhook: boolean): ChannelInput {
  const input: ChannelInput = {};
  if (b.name !== undefined) input.name = firstValue(b.name);
  const url = firstValue(b.url).trim();
  if (url) input.url = url;
  const format = firstValue(b.format);
  if (format && (url ? isHttp(url) : webhook)) input.format = format as WebhookFormat;
  return input;
}

/** The workspace's channels and their forms; other files' sections (digests) join through SECTIONS. */
export const channelPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .get(
      CHANNELS,
      ({ s, request }) => {
        const { flash, headers } = takeFlash(deps, s, request);
        return channelsPage(deps, s, { flash: { ...flashFrom(new URL(request.url)), ...flash } }, SECTIONS, 200, headers);
      },
      { session: "page" },
    )
    .post(
      CHANNELS,
      async ({ s, body }) => {
        const input = channelInput(formFields(body), false);
        const { body: made } = await createChannel({ ctx: s.ctx, input: { name: input.name ?? "", url: input.url ?? "", format: input.format } });
        return redirectWithFlash(deps, s, CHANNELS, { ok: `Channel “${made.name}” added. Send it a test, then choose it on a stream's settings page.` });
      },
      { session: "form", refused: refusedOn(deps, () => "add") },
    )
    .post(
      `${CHANNELS}/:id`,
      async ({ s, params, body }) => {
        const before = await getChannel({ ctx: s.ctx, id: params.id });
        const { body: saved } = await updateChannel({ ctx: s.ctx, id: params.id, input: channelInput(formFields(body), before.kind === "webhook") });
        const ok = before.status === "disabled" ? `Channel “${saved.name}” re-enabled: deliveries go to it again.` : `Channel “${saved.name}” saved.`;
        return redirectWithFlash(deps, s, CHANNELS, { ok });
      },
      { session: "form", refused: refusedOn(deps, (p) => editForm(p.id ?? "")) },
    )
    .post(
      `${CHANNELS}/:id/test`,
      async ({ s, params }) => {
        await limit(deps, "testDeliveriesPerAccount", s.account.id, "At most 10 test deliveries in 10 minutes.");
        await testChannel({ ctx: s.ctx, id: params.id });
        return redirectWithFlash(deps, s, CHANNELS, { ok: "Test sent: its result shows under Last attempt in a moment (reload to see it)." });
      },
      { session: "form", refused: refusedOn(deps, () => "row") },
    )
    .post(
      `${CHANNELS}/:id/delete`,
      async ({ s, params }) => {
        await deleteChannel({ ctx: s.ctx, id: params.id });
        return redirectWithFlash(deps, s, CHANNELS, { ok: "Channel deleted: no stream sends or escalates to it any more, and its digests are gone." });
      },
      { session: "form", refused: refusedOn(deps, () => "row") },
    );
