import { cron } from "@elysiajs/cron";
import { Elysia } from "elysia";
import type { Deps } from "../deps";
import { runLifecycle } from "../modules/accounts/lifecycle";
import { checkDeadlines } from "../modules/deadman/service";
import { expireExports } from "../modules/export/service";
import { flushTokenUse } from "../modules/tokens/service";
import { pruneApiErrors } from "../modules/errors/service";
import { purgeExpiredKeys } from "../modules/idempotency/service";
import { pruneInboxDeliveries } from "../modules/inbox/service";
import { expireUnusedClients } from "../mcp/oauth/clients";
import { purgeFinishedJobs } from "./queue";

/** Periodic work. Each task reads its due items from the database, so none is lost to a restart. */
export const PERIODIC_TASKS = [
  { name: "lifecycle", pattern: "*/15 * * * * *", run: (deps: Deps) => void runLifecycle(deps) },
  // Dead-man deadlines are read from the notes every 2 s: alerts go out within seconds of one.
  { name: "deadman", pattern: "*/2 * * * * *", run: (deps: Deps) => void checkDeadlines(deps) },
  { name: "idempotency-purge", pattern: "0 */10 * * * *", run: (deps: Deps) => void purgeExpiredKeys(deps) },
  { name: "error-log-prune", pattern: "0 7 * * * *", run: (deps: Deps) => pruneApiErrors(deps) },
  // The job runner wakes on enqueue and on its own retry timer; this sweep is the safety net.
  { name: "jobs-sweep", pattern: "*/10 * * * * *", run: (deps: Deps) => deps.jobs.wake() },
  { name: "jobs-purge", pattern: "0 17 * * * *", run: (deps: Deps) => void purgeFinishedJobs(deps) },
  { name: "export-expiry", pattern: "0 */5 * * * *", run: (deps: Deps) => void expireExports(deps) },
  { name: "token-use", pattern: "30 * * * * *", run: (deps: Deps) => void flushTokenUse(deps) },
  { name: "inbox-prune", pattern: "0 27 * * * *", run: (deps: Deps) => void pruneInboxDeliveries(deps) },
  // OAuth clients that never completed a grant go a day after registering (hourly, so within 25 h).
  { name: "oauth-client-expiry", pattern: "0 41 * * * *", run: (deps: Deps) => expireUnusedClients(deps) },
] as const;

export const SCHEDULER_BEAT = "scheduler";
/** The lifecycle task beats every 15 s; missing four beats means the scheduler is stuck. */
export const SCHEDULER_STALE_MS = 60_000;

/** Runs every task once, through the writer (also at start-up, so state is right at once). */
export async function runAllTasks(deps: Deps): Promise<void> {
  for (const task of PERIODIC_TASKS) await runTask(deps, task.name);
}

export async function runTask(deps: Deps, name: (typeof PERIODIC_TASKS)[number]["name"]): Promise<void> {
  const task = PERIODIC_TASKS.find((t) => t.name === name)!;
  try {
    await deps.writer.write(() => task.run(deps));
    deps.heartbeats.set(SCHEDULER_BEAT, deps.clock.now());
  } catch (e) {
    console.error(JSON.stringify({ level: "error", msg: "periodic task failed", task: name, error: String(e) }));
  }
}

/** Starts the @elysiajs/cron schedules; stop() ends them at shutdown. */
export function startScheduler(deps: Deps): { stop: () => void } {
  let app = new Elysia();
  for (const task of PERIODIC_TASKS) {
    app = app.use(cron({ name: task.name, pattern: task.pattern, protect: true, run: () => void runTask(deps, task.name) })) as unknown as Elysia;
  }
  const store = app.store as { cron?: Record<string, { stop: () => void }> };
  return { stop: () => Object.values(store.cron ?? {}).forEach((c) => c.stop()) };
}
