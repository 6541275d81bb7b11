/**
 * The dead-man sweep (every 2 s) at 50,000 watched streams, none due: what each of its queries
 * reads (the query plans) and how long the whole sweep takes. A quarter of the streams run on a
 * schedule, a quarter on an interval, a quarter are late with a repeat armed for later and an
 * alert owed later, a quarter are paused. The rows go straight into the tables of a harness's
 * database; NOTESTREAM_DATABASE_URL (as for the tests) runs it on PostgreSQL.
 *
 *   bun bench/deadman-sweep.ts            # BENCH_STREAMS=50000, BENCH_RUNS=50
 */
import { sql } from "drizzle-orm";
import { notes } from "../src/db/tables";
import { sqlRows } from "../src/db/sql";
import { checkDeadlines } from "../src/modules/deadman/service";
import { newNoteRow } from "../src/modules/notes/repo";
import { FakeClock, harness } from "../test/helpers/harness";

const STREAMS = Number(process.env.BENCH_STREAMS ?? 50_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 50);
const now = Date.parse("2026-11-27T12:00:00Z");
const HOUR = 3_600_000;

const h = await harness({ clock: new FakeClock(now) });
const { workspaceId } = await h.account("team", "bench@example.com");
for (let from = 0; from < STREAMS; from += 1_000) {
  const rows = Array.from({ length: Math.min(1_000, STREAMS - from) }, (_, k) => {
    const i = from + k;
    const base = newNoteRow({ workspaceId, kind: "stream", title: `s${i}.log`, filename: `s${i}.log` }, now - HOUR);
    switch (i % 4) {
      case 0:
        return { ...base, schedule: "0 3 * * *", deadmanStatus: "ok" as const, deadmanDueAt: now + 15 * HOUR };
      case 1:
        return { ...base, expectedIntervalSeconds: 7200, deadmanStatus: "ok" as const, deadmanDueAt: now + HOUR };
      case 2:
        return { ...base, expectedIntervalSeconds: 600, deadmanStatus: "late" as const, spellStartedAt: now - HOUR, alertedAt: now - 60_000, repeatAlertSeconds: 600, nextAlertAt: now + 540_000, alertOwedAt: i % 8 === 2 ? now + HOUR : null };
      default:
        return { ...base, expectedIntervalSeconds: 600, deadmanStatus: "paused" as const };
    }
  });
  await h.deps.writer.write(() => h.deps.db.insert(notes).values(rows));
}

const postgres = h.deps.store.kind === "postgres";
if (postgres) await sqlRows(h.deps.store, sql`ANALYZE notes`);
const explain = postgres ? "EXPLAIN" : "EXPLAIN QUERY PLAN";
const queries = {
  late: sql`SELECT * FROM notes WHERE deadman_status = 'ok' AND deadman_due_at <= ${now} AND trashed_at IS NULL`,
  runs: sql`SELECT * FROM notes WHERE run_started_at IS NOT NULL AND max_run_seconds IS NOT NULL AND trashed_at IS NULL AND run_started_at + max_run_seconds * 1000 <= ${now}`,
  owed: sql`SELECT * FROM notes WHERE alert_owed_at <= ${now} AND trashed_at IS NULL`,
  followUps: sql`SELECT * FROM notes WHERE next_alert_at <= ${now} AND trashed_at IS NULL`,
};
for (const [name, q] of Object.entries(queries)) {
  const plan = await sqlRows<Record<string, unknown>>(h.deps.store, sql`${sql.raw(explain)} ${q}`);
  console.log(`${name}: ${plan.map((r) => r.detail ?? r["QUERY PLAN"]).join(" / ")}`);
}

const times: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const t0 = performance.now();
  const found = await h.deps.writer.write(() => checkDeadlines(h.deps));
  times.push(performance.now() - t0);
  if (found !== 0) throw new Error(`the sweep found ${found} streams due; none should be`);
}
times.sort((a, b) => a - b);
console.log(`${h.deps.store.kind}, ${STREAMS} streams: checkDeadlines median ${times[RUNS >> 1]!.toFixed(2)} ms, max ${times.at(-1)!.toFixed(2)} ms over ${RUNS} runs`);
await h.close();
