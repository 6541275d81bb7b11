import { count } from "drizzle-orm";
import { Elysia } from "elysia";
import { workspaces } from "../../db/tables";
import type { Deps } from "../../deps";
import { JOBS_BEAT } from "../../jobs/runner";
import { SCHEDULER_BEAT, SCHEDULER_STALE_MS } from "../../jobs/scheduler";

type Check = { status: "ok" | "fail"; detail?: string; ms?: number };

/** GET /up/deep: a real query against the database and the scheduler's heartbeat. 503 when one fails. */
export const healthRoutes = (deps: Deps) =>
  new Elysia()
    .get("/up", () => ({ ok: true }), { detail: { hide: true } })
    .get(
      "/up/deep",
      async ({ set }) => {
        const checks: Record<string, Check> = {
          database: await checkDatabase(deps),
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

function checkBeat(deps: Deps, name: string): Check {
  const last = deps.heartbeats.get(name);
  if (last === undefined) return { status: "fail", detail: "no heartbeat yet" };
  const age = deps.clock.now() - last;
  return age <= SCHEDULER_STALE_MS ? { status: "ok", ms: age } : { status: "fail", detail: `last heartbeat ${Math.round(age / 1000)} s ago` };
}
