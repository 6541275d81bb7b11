import { count } from "drizzle-orm";
import { Elysia } from "elysia";
import { workspaces } from "../../db/tables";
import type { Deps } from "../../deps";
import { JOBS_BEAT } from "../../jobs/runner";
import { SCHEDULER_BEAT, SCHEDULER_STALE_MS } from "../../jobs/scheduler";

type Check = { status: "ok" | "fail"; detail?: string; ms?: number };

/** GET /up/deep: a real query against the database, room for writes, the scheduler's heartbeat. 503 when one fails. */
export const healthRoutes = (deps: Deps) =>
  new Elysia()
    .get("/up", () => ({ ok: true }), { detail: { hide: true } })
    .get(
      "/up/deep",
      async ({ set }) => {
        const checks: Record<string, Check> = {
          database: await checkDatabase(deps),
          disk: checkDisk(deps),
          scheduler: checkBeat(deps, SCHEDULER_BEAT),
          jobs: checkBeat(deps, JOBS_BEAT),
        };
        const ok = Object.values(checks).every((c) => c.status === "ok");
        set.status = ok ? 200 : 503;
        return { ok, checks };
      },
      { detail: { hide: true } },
    );

async function checkDatabase(deps: Deps): Promise<Check> {
  const t = performance.now();
  try {
    await deps.db.select({ n: count() }).from(workspaces);

    return { status: "ok", ms: Math.round((performance.now() - t) * 100) / 100 };
  } catch (e) {
    return { status: "fail", detail: String((e as Error).message) };
  }
}

/** Fails while writes are refused for a full disk (db/disk-space.ts): reads still work, writes do not. */
function checkDisk(deps: Deps): Check {
  const s = deps.disk.state();
  if (!s.full) return { status: "ok" };
  const where = s.disk === "postgres" ? "PostgreSQL's disk" : "the data directory's disk";
  return { status: "fail", detail: `${where} is full since ${new Date(s.since!).toISOString()}: writes answer 507 storage_full; reads, deletes and purges still work` };
}

function checkBeat(deps: Deps, name: string): Check {
  const last = deps.heartbeats.get(name);
  if (last === undefined) return { status: "fail", detail: "no heartbeat yet" };
  const age = deps.clock.now() - last;
  return age <= SCHEDULER_STALE_MS ? { status: "ok", ms: age } : { status: "fail", detail: `last heartbeat ${Math.round(age / 1000)} s ago` };
}
