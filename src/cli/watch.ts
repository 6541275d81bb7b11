// `pause`, `quiet` and `ack`: a watched stream's alerts held back or acknowledged from the command
// line, through the same client as the other client commands (client.ts).
import { UsageError, words } from "./args";
import { call, clientFrom, oneNote, type Client } from "./client";

interface Watched {
  id: string;
  filename: string | null;
  deadman_status: string;
  quiet_until: string | null;
  acknowledged_at: string | null;
}

/** `pause FILENAME|ID`: no alert of the stream until its next write; prints `paused`. */
export async function pauseCommand(argv: string[], out: (l: string) => void, info: (l: string) => void): Promise<void> {
  const { client, rest } = clientFrom(argv);
  const note = await oneStream(client, words(rest, {}).positionals, "pause");
  const paused = (await call(client, "POST", `/api/v1/notes/${note.id}/pause`)) as Watched;
  info(`${nameOf(paused)} is paused: no alert until its next write, which resumes watching`);
  out(paused.deadman_status);
}

/**
 * `quiet FILENAME|ID --for 1h | --until TIME | --off`: no alert before that time (a spell still on
 * then alerts once); prints the time it ends, or `off`.
 */
export async function quietCommand(argv: string[], out: (l: string) => void, info: (l: string) => void): Promise<void> {
  const { client, rest } = clientFrom(argv);
  const { values, positionals } = words(rest, { for: { type: "string" }, until: { type: "string" }, off: { type: "boolean" } });
  const given = [values.for !== undefined, values.until !== undefined, values.off === true].filter(Boolean).length;
  if (given !== 1) throw new UsageError("quiet needs one of --for DURATION (30m, 1h, 2d), --until TIME or --off");
  const until = values.off ? null : values.for !== undefined ? new Date(Date.now() + durationMs(values.for)).toISOString() : isoTime(values.until!);
  const note = await oneStream(client, positionals, "quiet");
  const quiet = (await call(client, "PATCH", `/api/v1/notes/${note.id}`, { note: { quiet_until: until } })) as Watched;
  info(quiet.quiet_until === null ? `${nameOf(quiet)} is not quiet: alerts go out as they happen` : `${nameOf(quiet)} is quiet until ${quiet.quiet_until}: a spell still on then alerts once`);
  out(quiet.quiet_until ?? "off");
}

/** `ack FILENAME|ID`: the alert is seen; no more repeats or escalation in this spell. Prints when. */
export async function ackCommand(argv: string[], out: (l: string) => void, info: (l: string) => void): Promise<void> {
  const { client, rest } = clientFrom(argv);
  const note = await oneStream(client, words(rest, {}).positionals, "ack");
  const acked = (await call(client, "POST", `/api/v1/notes/${note.id}/ack`)) as Watched;
  info(`${nameOf(acked)} is acknowledged: no more reminders or escalation of this alert; the next one alerts as usual`);
  out(String(acked.acknowledged_at));
}

async function oneStream(client: Client, positionals: string[], command: string): Promise<Watched> {
  return (await oneNote(client, positionals, command)) as Watched;
}

const nameOf = (n: Watched) => n.filename ?? n.id;

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `30m`, `1h`, `2d`, or a sum such as `1h30m`. */
function durationMs(text: string): number {
  if (!/^(\d+[smhd])+$/.test(text)) throw new UsageError(`--for takes a duration such as 30m, 1h, 2d or 1h30m, not "${text}"`);
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/(\d+)([smhd])/g)) ms += Number(n) * UNIT_MS[unit!]!;
  if (ms <= 0) throw new UsageError("--for must be longer than nothing");
  return ms;
}

/** An ISO date-time; one without an offset is this machine's local time, as a person at it means. */
function isoTime(text: string): string {
  const at = Date.parse(text);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(text) || Number.isNaN(at)) {
    throw new UsageError(`--until takes an ISO date-time such as 2026-12-01T18:00:00Z or 2026-12-01T18:00, not "${text}"`);
  }
  return new Date(at).toISOString();
}
