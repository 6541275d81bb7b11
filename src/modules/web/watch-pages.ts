// The forms of the settings page's watching cards (watch-view.ts, badge-view.ts): a cron schedule,
// pause and quiet, maintenance windows and the status badge. Each answers with a redirect and a
// flash, or the page again with the refused form's problems in place (refusedOn).
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { publicOrigin } from "../../http/origin";
import { fromWallTime } from "../../lib/zoned-time";
import { redirectWithFlash } from "../../web/flash";
import { pageMacros } from "../../web/macros";
import { deleteBadge, rotateBadge } from "../badges/service";
import { ackStream } from "../deadman/ack";
import { pauseStream } from "../deadman/pause";
import { windowsOf } from "../deadman/quiet";
import { visibleNote } from "../notes/repo";
import { updateNote } from "../notes/service";
import { firstValue, formFields } from "./form";
import { BADGE_FLASH } from "./badge-view";
import { refuseFields } from "./settings-forms";
import { refusedOn, settingsPath } from "./stream-settings-pages";
import { lengthText } from "./watch-view";

/** The quiet buttons' choices, in seconds: nothing else is taken from the button. */
const QUIET_FOR = new Set(["3600", "86400"]);

const iso = (at: number) => new Date(at).toISOString();

/** A positive number typed into a field, or NaN. */
const positive = (text: string) => (/^\d*\.?\d+$/.test(text) && Number(text) > 0 ? Number(text) : Number.NaN);

/** Minutes typed into a field as whole seconds; empty is null (none). */
const minutesAsSeconds = (text: string) => (text === "" ? null : Math.round(positive(text) * 60));

export const watchPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .post(
      "/notes/:id/schedule",
      async ({ s, params, body }) => {
        const b = formFields(body);
        if (firstValue(b.remove) === "yes") {
          await updateNote({ ctx: s.ctx, id: params.id, input: { schedule: null } });
          return redirectWithFlash(deps, s, settingsPath(params.id), { ok: "Schedule removed: the stream is no longer watched by it." });
        }
        const schedule = firstValue(b.schedule).trim();
        const graceText = firstValue(b.grace_minutes).trim();
        const grace = positive(graceText);
        refuseFields({
          schedule: schedule === "" && "Enter a cron schedule, such as 0 3 * * 1-5 (03:00 on weekdays).",
          grace_minutes: graceText !== "" && Number.isNaN(grace) && "Enter the grace in minutes, such as 5 (0.5 is 30 seconds).",
        });
        const input = { schedule, timezone: firstValue(b.timezone).trim() || "UTC", grace_seconds: graceText === "" ? undefined : Math.max(1, Math.round(grace * 60)) };
        await updateNote({ ctx: s.ctx, id: params.id, input });
        return redirectWithFlash(deps, s, settingsPath(params.id), { ok: "Schedule saved: it is late when no line comes within the grace after a scheduled time." });
      },
      { session: "form", refused: refusedOn(deps, "schedule") },
    )
    .post(
      "/notes/:id/pause",
      async ({ s, params }) => {
        await pauseStream({ ctx: s.ctx, id: params.id });
        return redirectWithFlash(deps, s, settingsPath(params.id), { ok: "Paused: no alert until the next write, which resumes watching." });
      },
      { session: "form", refused: refusedOn(deps, "quiet") },
    )
    .post(
      "/notes/:id/quiet",
      async ({ s, params, body }) => {
        const b = formFields(body);
        const now = deps.clock.now();
        if (firstValue(b.end) === "yes") {
          await updateNote({ ctx: s.ctx, id: params.id, input: { quiet_until: null } });
          return redirectWithFlash(deps, s, settingsPath(params.id), { ok: "Quiet time ended: alerts go out as they happen." });
        }
        const seconds = firstValue(b.for);
        let until: number | null;
        if (QUIET_FOR.has(seconds)) until = now + Number(seconds) * 1000;
        else {
          // A datetime-local input carries no zone: it is read in the stream's, as the label says.
          const note = await visibleNote(s.ctx, params.id);
          until = fromWallTime(firstValue(b.quiet_until), note.timezone);
          refuseFields({ quiet_until: (until === null && "Enter a date and time.") || (until! <= now && "Choose a time in the future.") });
        }
        await updateNote({ ctx: s.ctx, id: params.id, input: { quiet_until: iso(until!) } });
        const ok = QUIET_FOR.has(seconds) ? `Quiet for ${lengthText(Number(seconds))}: no alert goes out before then.` : "Quiet until the time you chose: no alert goes out before then.";
        return redirectWithFlash(deps, s, settingsPath(params.id), { ok });
      },
      { session: "form", refused: refusedOn(deps, "quiet") },
    )
    .post(
      "/notes/:id/maintenance",
      async ({ s, params, body }) => {
        const b = formFields(body);
        const schedule = firstValue(b.window_schedule).trim();
        const zone = firstValue(b.window_timezone).trim() || "UTC";
        const minutes = firstValue(b.window_minutes).trim();
        refuseFields({
          window_schedule: schedule === "" && "Enter when the window opens, as cron: 0 2 * * 0 is Sundays at 02:00.",
          window_minutes: !/^\d+$/.test(minutes) && "Enter how long it stays open, in whole minutes.",
        });
        const windows = windowsOf(await visibleNote(s.ctx, params.id));
        const added = { schedule, timezone: zone, duration_seconds: Number(minutes) * 60 };
        await updateNote({ ctx: s.ctx, id: params.id, input: { maintenance: [...windows, added] } });
        return redirectWithFlash(deps, s, settingsPath(params.id), { ok: "Maintenance window added." });
      },
      { session: "form", refused: refusedOn(deps, "window") },
    )
    .post(
      "/notes/:id/maintenance/remove",
      async ({ s, params, body }) => {
        const b = formFields(body);
        const windows = windowsOf(await visibleNote(s.ctx, params.id));
        const i = Number(firstValue(b.index));
        // The position and the schedule together: a list changed in another tab removes nothing by mistake.
        if (windows[i]?.schedule !== firstValue(b.schedule)) return redirectWithFlash(deps, s, settingsPath(params.id), { error: "That window was already changed or removed: nothing was removed." });
        await updateNote({ ctx: s.ctx, id: params.id, input: { maintenance: windows.filter((_, j) => j !== i) } });
        return redirectWithFlash(deps, s, settingsPath(params.id), { ok: "Maintenance window removed." });
      },
      { session: "form", refused: refusedOn(deps, "window") },
    )
    .post(
      "/notes/:id/followups",
      async ({ s, params, body }) => {
        const b = formFields(body);
        const repeat = firstValue(b.repeat_minutes).trim();
        const escalate = firstValue(b.escalate_minutes).trim();
        const minutesOnly = "Enter a number of minutes, or leave it empty.";
        refuseFields({ repeat_minutes: Number.isNaN(minutesAsSeconds(repeat)) && minutesOnly, escalate_minutes: Number.isNaN(minutesAsSeconds(escalate)) && minutesOnly });
        const input = { repeat_alert_seconds: minutesAsSeconds(repeat), escalate_after_seconds: minutesAsSeconds(escalate), escalate_to: firstValue(b.escalate_to).trim() || null };
        await updateNote({ ctx: s.ctx, id: params.id, input });
        return redirectWithFlash(deps, s, settingsPath(params.id), { ok: "Reminders and escalation saved." });
      },
      { session: "form", refused: refusedOn(deps, "followups") },
    )
    .post(
      "/notes/:id/ack",
      async ({ s, params }) => {
        await ackStream({ ctx: s.ctx, id: params.id });
        return redirectWithFlash(deps, s, settingsPath(params.id), { ok: "Acknowledged: no more reminders or escalation for this alert." });
      },
      { session: "form", refused: refusedOn(deps, "followups") },
    )
    .post(
      "/notes/:id/badge",
      async ({ s, params, request }) => {
        const r = await rotateBadge({ ctx: s.ctx, noteId: params.id, baseUrl: publicOrigin(deps, request) });
        return redirectWithFlash(deps, s, settingsPath(params.id), { secret: { kind: BADGE_FLASH, value: r.body.svg_url } });
      },
      { session: "form", refused: refusedOn(deps, "badge") },
    )
    .post(
      "/notes/:id/badge/disable",
      async ({ s, params }) => {
        await deleteBadge({ ctx: s.ctx, noteId: params.id });
        return redirectWithFlash(deps, s, settingsPath(params.id), { ok: "Badge turned off: its URLs answer 404 now." });
      },
      { session: "form", refused: refusedOn(deps, "badge") },
    );
