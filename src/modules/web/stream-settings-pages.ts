// A stream's settings: the page's route and its forms' (each answered with a redirect, or the page
// again with the refused form's problems in place). The page itself is drawn in stream-settings-view.ts.
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { AppError } from "../../http/errors";
import { publicOrigin } from "../../http/origin";
import { redirectWithFlash, takeFlash } from "../../web/flash";
import { flashFrom } from "../../web/layout";
import { pageMacros, type RefusalPage } from "../../web/macros";
import { plansWithDeadman } from "../deadman/availability";
import { MAX_INTERVAL_SECONDS, MAX_RUN_SECONDS } from "../deadman/service";
import { sendTestAlert } from "../deadman/test-alert";
import { disableInbox, replayDelivery, rotateInbox } from "../inbox/service";
import { visibleNote } from "../notes/repo";
import { updateNote } from "../notes/service";
import { MAX_RETENTION_DAYS } from "../streams/retention";
import { WEBHOOK_FORMATS, type WebhookFormat } from "../webhooks/formats";
import { checkWebhookUrl } from "../webhooks/target";
import { sendTestDelivery } from "../webhooks/test-delivery";
import { urlProblemText } from "../webhooks/wording";
import { fieldProblems, firstValue, formFields } from "./form";
import { inboxTemplatePages } from "./inbox-template-card";
import { limit } from "./limits";
import { noteNotFound } from "./note-parts";
import { formState, FORM_FIELD, refusedStatus, refuseFields, sentence, WHOLE_FORM } from "./settings-forms";
import { duration, streamSettingsPage } from "./stream-settings-view";
import { watchProblem } from "./watch-wording";

export const settingsPath = (id: string) => `/notes/${id}/settings`;

/** The service's refusals of the stream's fields, said beside the field of the form they belong to. */
function explain(deps: Deps, form: string, e: AppError): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const p of fieldProblems(e)) {
    switch (p.field) {
      case "note.webhook_url":
        errors[form === "webhook" ? "webhook_url" : WHOLE_FORM] = p.code === "missing" ? "Save a webhook URL first." : sentence(p.message.replace(/^webhook_url /, "The address "));
        break;
      case "note.webhook_format":
        errors.webhook_format = "Choose one of the formats in the list.";
        break;
      case "note.expected_interval_seconds":
        if (p.code === "not_set") errors[WHOLE_FORM] = "Save how often a line is expected first: the alert tells it.";
        else errors.every = `Choose an interval from ${duration(deps.config.minIntervalSeconds)} to ${MAX_INTERVAL_SECONDS / 86_400} days.`;
        break;
      case "note.alert_email":
        errors.alert_email = "Enter an e-mail address, or leave this empty to use your account's address.";
        break;
      case "note.retention":
        errors.retention = "Choose what happens at the size cap.";
        break;
      case "note.retention_days":
        errors.retention_days = `Enter a whole number of days from 1 to ${MAX_RETENTION_DAYS}, or leave it empty to keep lines of any age.`;
        break;
      default: {
        const watch = watchProblem(p, deps.config.minIntervalSeconds);
        // The form's own checks name its fields and are already worded for people.
        if (watch) errors[watch[0]] = watch[1];
        else if (p.code === FORM_FIELD) errors[p.field] = p.message;
        else errors[WHOLE_FORM] = sentence(p.message);
      }
    }
  }
  if (Object.keys(errors).length) return errors;
  if (e.code === "plan_required") return { [WHOLE_FORM]: `The dead-man's switch is available on ${plansWithDeadman(deps.config.limitProfile)}.` };
  if (e.code === "account_read_only") return { [WHOLE_FORM]: "This account is read-only: its notes can be read and exported, not changed." };
  if (form === "replay" && e.code === "not_found") return { [WHOLE_FORM]: "That payload is no longer in the dead letters." };
  if (form === "replay" && e.code === "conflict") return { [WHOLE_FORM]: "That payload is already queued again: it reaches the note in a moment." };
  return { [WHOLE_FORM]: sentence(e.message) };
}

/** A refused form of the page: the page again, the form as it was posted, its problems in place. */
export const refusedOn =
  (deps: Deps, form: string): RefusalPage =>
  async (e, { s, params, body }) => {
    if (!s) return undefined;
    const state = formState(form, body, explain(deps, form, e));
    try {
      return await streamSettingsPage(deps, s, params.id ?? "", { flash: {}, form: state }, refusedStatus(state, e), e.headers);

    } catch {
      // The stream itself is gone (or never was this account's): the same 404 as its page.
      return noteNotFound(s);
    }
  };

/** Any refusal while showing the page (above all, a note this account cannot see) is its 404. */
const settingsRefused: RefusalPage = (_, { s }) => noteNotFound(s);

const isFormat = (v: string): v is WebhookFormat => (WEBHOOK_FORMATS as readonly string[]).includes(v);

/** A stream's settings page (outbound webhook, inbox, retention, quiet alert) and its forms, each answered with a redirect. */
export const streamSettingsPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .get(
      "/notes/:id/settings",
      ({ s, params, request }) => {
        const { flash, headers } = takeFlash(deps, s, request);
        return streamSettingsPage(deps, s, params.id, { flash: { ...flashFrom(new URL(request.url)), ...flash } }, 200, headers);
      },
      { session: "page", refused: settingsRefused },
    )
    .post(
      "/notes/:id/webhook",
      async ({ s, params, body }) => {
        const b = formFields(body);
        const remove = firstValue(b.remove) === "yes";
        const url = firstValue(b.webhook_url).trim();
        const format = firstValue(b.webhook_format) || "generic";
        const problem = remove || !url ? null : checkWebhookUrl(deps, url);
        refuseFields({ webhook_url: problem && urlProblemText(problem), webhook_format: !isFormat(format) && "Choose one of the formats in the list." });
        await updateNote({ ctx: s.ctx, id: params.id, input: { webhook_url: remove || !url ? null : url, webhook_format: format as WebhookFormat } });
        return redirectWithFlash(deps, s, settingsPath(params.id), { ok: remove || !url ? "Webhook removed." : "Webhook saved: the next append is delivered." });
      },
      { session: "form", refused: refusedOn(deps, "webhook") },
    )
    .post(
      "/notes/:id/webhook/test",
      async ({ s, params }) => {
        await limit(deps, "testDeliveriesPerAccount", s.account.id, "At most 10 test deliveries in 10 minutes.");
        await sendTestDelivery({ ctx: s.ctx, noteId: params.id });
        return redirectWithFlash(deps, s, settingsPath(params.id), { ok: "Test delivery sent: its result shows under Recent deliveries in a moment (reload to see it)." });
      },
      { session: "form", refused: refusedOn(deps, "test-delivery") },
    )
    .post(
      "/notes/:id/deadman",
      async ({ s, params, body }) => {
        const b = formFields(body);
        const everyText = firstValue(b.every).trim();
        // An empty interval on a stream watched by its schedule keeps the schedule; "Turn off" ends both.
        const bySchedule = firstValue(b.off) !== "yes" && everyText === "" && (await visibleNote(s.ctx, params.id)).schedule !== null;
        const off = !bySchedule && (firstValue(b.off) === "yes" || everyText === "");
        const every = Number(everyText);
        const unit = firstValue(b.unit) || "hours";
        const runText = firstValue(b.max_run_minutes).trim();
        const runMinutes = Number(runText);
        if (!off) {
          refuseFields({
            every: !bySchedule && !(Number.isFinite(every) && every > 0) && "Enter how often a line is expected: a number of hours or minutes.",
            unit: unit !== "hours" && unit !== "minutes" && "Choose hours or minutes.",
            max_run_minutes: runText !== "" && !(Number.isFinite(runMinutes) && runMinutes > 0 && runMinutes <= MAX_RUN_SECONDS / 60) && `Enter a number of minutes up to ${MAX_RUN_SECONDS / 60}, or leave it empty.`,
          });
        }
        await updateNote({
          ctx: s.ctx,
          id: params.id,
          input: {
            expected_interval_seconds: bySchedule ? undefined : off ? null : Math.round(every * (unit === "minutes" ? 60 : 3600)),
            schedule: off ? null : undefined,
            alert_email: off ? undefined : firstValue(b.alert_email).trim() || null,
            max_run_seconds: off ? null : runText === "" ? null : Math.max(1, Math.round(runMinutes * 60)),
            alert_webhook: off ? false : firstValue(b.alert_webhook) === "yes",
          },
        });
        return redirectWithFlash(deps, s, settingsPath(params.id), { ok: off ? "Alerts turned off." : "Saved: we'll mail if it goes quiet." });
      },
      { session: "form", refused: refusedOn(deps, "deadman") },
    )
    .post(
      "/notes/:id/deadman/test",
      async ({ s, params }) => {
        await limit(deps, "testAlertsPerAccount", s.account.id, "At most 5 test alerts an hour.");
        const { body } = await sendTestAlert({ ctx: s.ctx, noteId: params.id, to: s.account.email });
        return redirectWithFlash(deps, s, settingsPath(params.id), { ok: `Test alert sent to ${body.to}: it should arrive within a minute.` });
      },
      { session: "form", refused: refusedOn(deps, "test-alert") },
    )
    .post(
      "/notes/:id/retention",
      async ({ s, params, body }) => {
        const b = formFields(body);
        const days = firstValue(b.retention_days).trim();
        // The service checks both, as for the API; its refusals are worded for the form in explain().
        await updateNote({
          ctx: s.ctx,
          id: params.id,
          input: { retention: firstValue(b.retention) as "reject" | "drop_oldest", retention_days: days === "" ? null : Number(days) },
        });
        return redirectWithFlash(deps, s, settingsPath(params.id), { ok: "Retention saved." });
      },
      { session: "form", refused: refusedOn(deps, "retention") },
    )
    .post(
      "/notes/:id/inbox/rotate",
      async ({ s, params, request }) => {
        const r = await rotateInbox({ ctx: s.ctx, noteId: params.id, baseUrl: publicOrigin(deps, request) });
        return redirectWithFlash(deps, s, settingsPath(params.id), { secret: { kind: "inbox-url", value: r.body.inbox_url } });
      },
      { session: "form", refused: refusedOn(deps, "inbox") },
    )
    .post(
      "/notes/:id/inbox/disable",
      async ({ s, params }) => {
        await disableInbox({ ctx: s.ctx, noteId: params.id });
        return redirectWithFlash(deps, s, settingsPath(params.id), { ok: "Inbox turned off: its URL answers 404 now." });
      },
      { session: "form", refused: refusedOn(deps, "inbox") },
    )
    .post(
      "/notes/:id/inbox/:did/replay",
      async ({ s, params }) => {
        await replayDelivery({ ctx: s.ctx, noteId: params.id, deliveryId: params.did });
        return redirectWithFlash(deps, s, settingsPath(params.id), { ok: "Queued again: it will be added to the note in a moment." });
      },
      { session: "form", refused: refusedOn(deps, "replay") },
    )
    .use(inboxTemplatePages(deps, { page: (s, id, form) => streamSettingsPage(deps, s, id, { flash: {}, form }), refused: refusedOn(deps, "inbox-template") }));
