// The Notify card's forms (notify-card.ts): add a channel to a stream's notify list, change or
// remove an entry, saved through the notes PATCH service's `notify` field so its refusals are the
// API's, shown beside the field of the form they are about.
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { AppError, ValidationFailed } from "../../http/errors";
import { redirectWithFlash } from "../../web/flash";
import { pageMacros, type RefusalPage } from "../../web/macros";
import type { WebSession } from "../../web/session";
import { MAX_BATCH_SECONDS, notifyOf, type NotifyEntry } from "../channels/notify";
import { visibleNote } from "../notes/repo";
import { updateNote } from "../notes/service";
import { fieldProblems, firstValue, formFields, type FormBody } from "./form";
import { entryForm, NOTIFY_ADD } from "./notify-card";
import { FORM_FIELD, sentence, WHOLE_FORM } from "./settings-forms";
import { refusedOn, settingsPath } from "./stream-settings-pages";

/** An entry as posted: the events ticked and the window typed (empty: none; anything else is the service's to judge). */
function postedEntry(channelId: string, b: FormBody): NotifyEntry {
  const events = ([] as string[]).concat(b.events ?? []) as NotifyEntry["events"];
  const batch = firstValue(b.batch_seconds).trim();
  return { channel_id: channelId, events, batch_seconds: batch === "" ? null : Number(batch) };
}

/** The PATCH's refusals of notify, moved onto the posted form's fields and said for people. */
function notifyProblems(e: AppError): AppError {
  if (!(e instanceof ValidationFailed)) return e;
  return new ValidationFailed(
    fieldProblems(e).map((p) => {
      const field = /^note\.notify\[\d+\]\.(\w+)$/.exec(p.field)?.[1] ?? WHOLE_FORM;
      const words: Record<string, string> = {
        events: "Choose alerts, lines or both.",
        batch_seconds: `Enter a whole number of seconds from 1 to ${MAX_BATCH_SECONDS}, or leave it empty for one message per append.`,
        channel_id: p.code === "duplicate" ? "This channel is in the list already: change its entry above." : "That channel is no longer in this workspace: choose another.",
      };
      return { field, code: FORM_FIELD, message: words[field] ?? sentence(p.message) };
    }),
  );
}

async function saveNotify(s: WebSession, id: string, notify: NotifyEntry[]): Promise<void> {
  try {
    await updateNote({ ctx: s.ctx, id, input: { notify } });
  } catch (e) {
    throw e instanceof AppError ? notifyProblems(e) : e;
  }
}

/** A refused entry's form: the page again, that entry's form as posted. */
const refusedEntry =
  (deps: Deps): RefusalPage =>
  (e, c) =>
    refusedOn(deps, entryForm(c.params.channel ?? ""))(e, c);

/** The card's forms: add a channel to the stream's notify list, change or remove an entry. */
export const notifyPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .post(
      "/notes/:id/notify",
      async ({ s, params, body }) => {
        const b = formFields(body);
        const entries = notifyOf(await visibleNote(s.ctx, params.id));
        await saveNotify(s, params.id, [...entries, postedEntry(firstValue(b.channel_id), b)]);
        return redirectWithFlash(deps, s, settingsPath(params.id), { ok: "Channel added: this stream notifies it from now on." });
      },
      { session: "form", refused: refusedOn(deps, NOTIFY_ADD) },
    )
    .post(
      "/notes/:id/notify/:channel",
      async ({ s, params, body }) => {
        const b = formFields(body);
        const entries = notifyOf(await visibleNote(s.ctx, params.id));
        if (!entries.some((e) => e.channel_id === params.channel)) {
          return redirectWithFlash(deps, s, settingsPath(params.id), { error: "That channel was already removed from this stream: nothing changed." });
        }
        const remove = firstValue(b.remove) === "yes";
        const kept = remove ? entries.filter((e) => e.channel_id !== params.channel) : entries.map((e) => (e.channel_id === params.channel ? postedEntry(params.channel, b) : e));
        await saveNotify(s, params.id, kept);
        return redirectWithFlash(deps, s, settingsPath(params.id), { ok: remove ? "Removed: this stream no longer notifies that channel." : "Saved." });
      },
      { session: "form", refused: refusedEntry(deps) },
    );
