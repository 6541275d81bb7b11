import type { Deps } from "./deps";
import { purgeExpiredKeys } from "./http/idempotency";
import { purgeFinishedJobs } from "./jobs/queue";
import { runTask as runOne, runTasks, startScheduler, type PeriodicTask } from "./jobs/scheduler";
import { expireUnusedClients } from "./modules/oauth/clients";
import { runLifecycle } from "./modules/accounts/lifecycle";
import { checkDeadlines } from "./modules/deadman/service";
import { pruneAckLinks } from "./modules/deadman/ack-links";
import { sendDueDigests } from "./modules/digests/service";
import { pruneApiErrors } from "./modules/api-errors/service";
import { expireExports } from "./modules/export/service";
import { pruneInboxDeliveries } from "./modules/inbox/service";
import { catchUpSearchIndex } from "./modules/search/indexer";
import { purgeTrash } from "./modules/notes/trash";
import { expireOldLines } from "./modules/streams/retention";
import { flushTokenUse } from "./modules/tokens/service";

/** Every periodic task of the service; each feature exports its sweep, and its timing is chosen here. */
export const PERIODIC_TASKS = [
  { name: "lifecycle", pattern: "*/15 * * * * *", run: (deps: Deps) => runLifecycle(deps) },
  // Dead-man deadlines are read from the notes every 2 s: alerts go out within seconds of one.
  { name: "deadman", pattern: "*/2 * * * * *", run: (deps: Deps) => checkDeadlines(deps) },
  // Appends ask for their own index pass (modules/search/indexer.ts); this one, at start-up too,
  // takes what a crash (of this or another instance) left between an append and its pass.
  // Digests go at their scheduled minute, within 15 s.
  { name: "digests", pattern: "*/15 * * * * *", run: (deps: Deps) => sendDueDigests(deps) },
  { name: "search-index", pattern: "20 * * * * *", run: (deps: Deps) => catchUpSearchIndex(deps) },
  { name: "idempotency-purge", pattern: "0 */10 * * * *", run: (deps: Deps) => purgeExpiredKeys(deps) },
  { name: "error-log-prune", pattern: "0 7 * * * *", run: (deps: Deps) => pruneApiErrors(deps) },
  // The job runner wakes on enqueue and on its own retry timer; this sweep is the safety net.
  { name: "rate-windows-prune", pattern: "0 */5 * * * *", run: (deps: Deps) => deps.limiter.forgetEnded?.() },
  { name: "jobs-sweep", pattern: "*/10 * * * * *", run: (deps: Deps) => deps.jobs.wake(), everyInstance: true },
  { name: "jobs-purge", pattern: "0 17 * * * *", run: (deps: Deps) => purgeFinishedJobs(deps) },
  { name: "export-expiry", pattern: "0 */5 * * * *", run: (deps: Deps) => expireExports(deps) },
  { name: "token-use", pattern: "30 * * * * *", run: (deps: Deps) => flushTokenUse(deps), everyInstance: true },
  { name: "ack-link-prune", pattern: "0 29 * * * *", run: (deps: Deps) => pruneAckLinks(deps) },
  { name: "inbox-prune", pattern: "0 27 * * * *", run: (deps: Deps) => pruneInboxDeliveries(deps) },
  // Notes are purged 30 days after trashing, within the hour: finding them scans the notes table
  // (no index on trashed_at), so hourly, and each run takes a bounded batch.
  { name: "trash-purge", pattern: "0 33 * * * *", run: (deps: Deps) => purgeTrash(deps), freesSpace: true },
  // Lines older than a stream's retention_days go within minutes; each run removes a bounded batch.
  { name: "retention", pattern: "50 */5 * * * *", run: (deps: Deps) => expireOldLines(deps), freesSpace: true },
  // OAuth clients that never completed a grant go a day after registering (hourly, so within 25 h).
  { name: "oauth-client-expiry", pattern: "0 41 * * * *", run: (deps: Deps) => expireUnusedClients(deps) },
] as const satisfies readonly PeriodicTask[];

export type TaskName = (typeof PERIODIC_TASKS)[number]["name"];

/** Runs every task once, in order (at start-up, so state is right at once; tests call it too). */
export const runAllTasks = (deps: Deps): Promise<void> => runTasks(deps, PERIODIC_TASKS);

export const runTask = (deps: Deps, name: TaskName): Promise<void> => runOne(deps, PERIODIC_TASKS.find((t) => t.name === name)!);

export const startPeriodicTasks = (deps: Deps): { stop: () => void } => startScheduler(deps, PERIODIC_TASKS);
