// The prompts a client offers as slash commands: a stream summarised, a day's digest, an incident's
// timeline. Each embeds the lines it is about as a resource at the stream's address, each line
// after the time it was appended, cut to a bound with a note of what was left out.
import type { McpServer } from "@modelcontextprotocol/server";
import { DAY_MS, iso } from "../lib/clock";
import { MAX_LINES } from "../modules/streams/lines";
import { ProtocolError, RPC, type Capabilities, type Line, type NotesBackend } from "./backend";
import { callerNotes, protocolError } from "./resources";
import { streamUri } from "./uris";

/** The most text of lines one prompt embeds: enough for a model to work from, small beside its context. */
export const PROMPT_MAX_CHARS = 40_000;
/** Streams a daily digest looks at, the most recently written first. */
const DIGEST_STREAMS = 20;
const MINUTE_MS = 60_000;

const PROMPTS = [
  {
    name: "summarise_stream",
    title: "Summarise a stream",
    description: "Summarises what a stream's lines say happened, optionally since a time",
    arguments: [
      { name: "filename", description: "The stream's filename, e.g. deploys.log", required: true },
      { name: "since", description: "A time (2026-11-27T09:00:00Z) or a span back from now (90m, 2h, 1d)", required: false },
    ],
  },
  { name: "daily_digest", title: "Daily digest", description: "A digest of every stream written to in the last 24 hours", arguments: [] },
  {
    name: "incident_timeline",
    title: "Incident timeline",
    description: "A timeline of what a stream recorded around a moment",
    arguments: [
      { name: "filename", description: "The stream's filename", required: true },
      { name: "around", description: "The moment, e.g. 2026-11-27T14:05:00Z", required: true },
      { name: "minutes", description: "Minutes either side of it (default 30, at most 1440)", required: false },
    ],
  },
];

const invalid = (message: string) => new ProtocolError(RPC.invalidParams, `validation_failed: ${message}`);

/** A time given as an instant or as a span back from `now` (90m, 2h, 1d). */
function timeOf(raw: string, field: string, now: number): number {
  const span = /^([0-9]{1,5})([mhd])$/.exec(raw.trim());
  if (span) return now - Number(span[1]) * { m: MINUTE_MS, h: 60 * MINUTE_MS, d: DAY_MS }[span[2] as "m" | "h" | "d"];
  const t = /^[0-9]{4}-[0-9]{2}-[0-9]{2}/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(t)) throw invalid(`${field} must be a time (2026-11-27T09:00:00Z) or a span back from now (90m, 2h, 1d)`);
  return t;
}

/** The lines in [from, to], newest kept when they hold more than `maxChars`, with what was left out said in words. */
export function window(lines: Line[], from: number, to: number, maxChars: number): { lines: Line[]; omitted: string[] } {
  const omitted: string[] = [];
  // Only the newest 1,000 lines are read: when they all fall after `from`, older ones may be missing.
  if (lines.length >= MAX_LINES && Date.parse(lines[0]!.at) > from) omitted.push(`lines before ${lines[0]!.at} are older than the newest ${MAX_LINES} and not included`);
  const inside = lines.filter((l) => {
    const t = Date.parse(l.at);
    return t >= from && t <= to;
  });
  let size = 0;
  let keep = inside.length;
  while (keep > 0 && size + inside[keep - 1]!.text.length + 26 <= maxChars) size += inside[--keep]!.text.length + 26;
  if (keep > 0) omitted.push(`${keep} earlier line${keep === 1 ? "" : "s"} in this span left out to keep the prompt short`);
  return { lines: inside.slice(keep), omitted };
}

const text = (t: string) => ({ role: "user" as const, content: { type: "text" as const, text: t } });
const embedded = (filename: string, lines: Line[]) => ({
  role: "user" as const,
  content: { type: "resource" as const, resource: { uri: streamUri(filename), mimeType: "text/plain", text: lines.map((l) => `${l.at} ${l.text}\n`).join("") } },
});
const leftOut = (omitted: string[]) => (omitted.length ? ` Left out: ${omitted.join("; ")}.` : "");

async function summariseStream(backend: NotesBackend, args: Record<string, string>) {
  const filename = required(args, "filename");
  const since = args.since ? timeOf(args.since, "since", backend.now()) : -Infinity;
  const w = window(await backend.streamLines({ filename }, MAX_LINES), since, Infinity, PROMPT_MAX_CHARS);
  const span = args.since ? ` since ${iso(since)}` : "";
  return [
    text(
      `Summarise what the stream ${filename} recorded${span}: what happened, what failed, what is still open. ` +
        `Its ${w.lines.length} lines follow, each after the time it was appended.${leftOut(w.omitted)}`,
    ),
    embedded(filename, w.lines),
  ];
}

async function dailyDigest(backend: NotesBackend, caps: Capabilities) {
  const now = backend.now();
  const { notes } = await callerNotes(backend, caps, { limit: DIGEST_STREAMS });
  const recent = notes.filter((n) => n.kind === "stream" && n.filename && Date.parse(String((n as { updated_at?: string }).updated_at)) >= now - DAY_MS);
  if (recent.length === 0) return [text(`Nothing was appended to any stream in the 24 hours before ${iso(now)}: say so in one line.`)];
  const share = Math.floor(PROMPT_MAX_CHARS / recent.length);
  const parts = await Promise.all(recent.map(async (n) => ({ filename: n.filename!, ...window(await backend.streamLines({ id: n.id }, MAX_LINES), now - DAY_MS, now, share) })));
  const omitted = parts.flatMap((p) => p.omitted.map((o) => `${p.filename}: ${o}`));
  return [
    text(
      `Write a digest of the 24 hours before ${iso(now)} across ${parts.length} stream${parts.length === 1 ? "" : "s"} (${parts.map((p) => p.filename).join(", ")}): ` +
        `per stream, what happened and anything that needs attention. Each stream's lines follow, each after the time it was appended.${leftOut(omitted)}`,
    ),
    ...parts.map((p) => embedded(p.filename, p.lines)),
  ];
}

async function incidentTimeline(backend: NotesBackend, args: Record<string, string>) {
  const filename = required(args, "filename");
  const around = timeOf(required(args, "around"), "around", backend.now());
  const minutes = args.minutes === undefined ? 30 : /^[0-9]{1,4}$/.test(args.minutes) ? Number(args.minutes) : NaN;
  if (!(minutes >= 1 && minutes <= 1440)) throw invalid("minutes must be a whole number from 1 to 1440");
  const from = around - minutes * MINUTE_MS;
  const to = around + minutes * MINUTE_MS;
  const w = window(await backend.streamLines({ filename }, MAX_LINES), from, to, PROMPT_MAX_CHARS);
  return [
    text(
      `Build a timeline of the incident recorded in ${filename} around ${iso(around)} (from ${iso(from)} to ${iso(to)}): ` +
        `the first sign, each change, the recovery, and what caused it if the lines say. Its ${w.lines.length} lines in that span follow, each after the time it was appended.${leftOut(w.omitted)}`,
    ),
    embedded(filename, w.lines),
  ];
}

function required(args: Record<string, string>, name: string): string {
  const v = args[name];
  if (v === undefined || v === "") throw invalid(`${name} is required`);
  return v;
}

/** Registers the three prompts on a server whose token may read. */
export function registerPrompts(server: McpServer, backend: NotesBackend, caps: Capabilities): void {
  server.server.registerCapabilities({ prompts: { listChanged: false } });
  server.server.setRequestHandler("prompts/list", async () => ({ prompts: PROMPTS }));
  server.server.setRequestHandler("prompts/get", async (request) => {
    const { name } = request.params;
    const args = request.params.arguments ?? {};
    const prompt = PROMPTS.find((p) => p.name === name);
    if (!prompt) throw new ProtocolError(RPC.invalidParams, `not_found: no prompt is called ${name}`);
    try {
      const messages = name === "summarise_stream" ? await summariseStream(backend, args) : name === "daily_digest" ? await dailyDigest(backend, caps) : await incidentTimeline(backend, args);
      return { description: prompt.description, messages };
    } catch (e) {
      throw protocolError(e);
    }
  });
}
