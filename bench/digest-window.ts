/**
 * A digest of a large workspace: 50 streams of 30,000 chunks each (a line per append, spread over
 * 30 days; 3 MB a stream, the per-note cap), digested over its last day. Times composeDigest, which
 * runs on the event loop (bun:sqlite is synchronous, so on SQLite this is how long every request
 * waits), with the index that finds a stream's chunks by time (note_chunks_note_at) and, in the same
 * run on the same rows, without it: the ratio is what the index saves. The rows go straight into the
 * tables of a harness's database; NOTESTREAM_DATABASE_URL (as for the tests) runs it on PostgreSQL.
 *
 *   bun bench/digest-window.ts            # BENCH_STREAMS=50, BENCH_CHUNKS=30000, BENCH_RUNS=5
 */
import { sql } from "drizzle-orm";
import { noteChunks, notes } from "../src/db/tables";
import { sqlRows } from "../src/db/sql";
import { composeDigest } from "../src/modules/digests/compose";
import { newNoteRow } from "../src/modules/notes/repo";
import { FakeClock, harness } from "../test/helpers/harness";

const STREAMS = Number(process.env.BENCH_STREAMS ?? 50);
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 30_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const now = Date.parse("2026-11-27T12:00:00Z");
const DAY = 86_400_000;
const LINE = `${"x".repeat(99)}\n`;

const h = await harness({ clock: new FakeClock(now) });
const { workspaceId } = await h.account("team", "bench@example.com");
const streams = Array.from({ length: STREAMS }, (_, i) => newNoteRow({ workspaceId, kind: "stream", title: `s${i}.log`, filename: `s${i}.log` }, now - 30 * DAY));
await h.deps.writer.write(() => h.deps.db.insert(notes).values(streams));
// In time order across the streams, as appends arrive.
const BATCH = 5_000;
for (let from = 0; from < CHUNKS * STREAMS; from += BATCH) {
  const rows = Array.from({ length: Math.min(BATCH, CHUNKS * STREAMS - from) }, (_, k) => {
    const i = from + k;
    return { noteId: streams[i % STREAMS]!.id, text: LINE, at: now - 30 * DAY + Math.floor((i / (CHUNKS * STREAMS)) * 30 * DAY) };
  });
  await h.deps.writer.write(() => h.deps.db.insert(noteChunks).values(rows));
}
const postgres = h.deps.store.kind === "postgres";
if (postgres) await sqlRows(h.deps.store, sql`ANALYZE note_chunks`);

async function timed(label: string): Promise<number> {
  const times: number[] = [];
  let lines = 0;
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const digest = await composeDigest(h.deps, { workspaceId, streams: "all", lastLines: 3, timezone: "UTC" }, now - DAY, now);
    times.push(performance.now() - t0);
    lines = Number(/(\d[\d,]*) lines?/.exec(digest.title)![1]!.replaceAll(",", ""));
  }
  times.sort((a, b) => a - b);
  const median = times[RUNS >> 1]!;
  console.log(`${label}: composeDigest median ${median.toFixed(1)} ms, max ${times.at(-1)!.toFixed(1)} ms over ${RUNS} runs (${lines} lines in the window)`);
  return median;
}

console.log(`${h.deps.store.kind}, ${STREAMS} streams × ${CHUNKS} chunks, the last of 30 days digested`);
const withIndex = await timed("with note_chunks_note_at");
await sqlRows(h.deps.store, sql`DROP INDEX note_chunks_note_at`);
if (postgres) await sqlRows(h.deps.store, sql`ANALYZE note_chunks`);
const without = await timed("without it (as before 0027)");
console.log(`with / without: ${(withIndex / without).toFixed(3)}`);
await h.close();
