import { cron } from "@elysiajs/cron";
import { Elysia } from "elysia";
import type { Deps } from "../deps";
import { onceAcrossInstances, tickOf } from "../db/cluster";
import { StorageFull } from "../http/errors";

/** Periodic work. Each task reads its due items from the database, so none is lost to a restart. */
export interface PeriodicTask {
  name: string;
  /** Six-field cron pattern (seconds first). */
  pattern: string;
  /** Runs inside one write; a promise it returns (its queries) is awaited before the write ends. */
  run: (deps: Deps) => unknown;
  /**
   * Work of this process itself (its own runner, its own counters), done by every instance. Any
   * other task is done once per tick across the instances sharing a PostgreSQL database.
   */
  everyInstance?: boolean;
  /** Deletes rows (the trash's purge, retention): runs on a full disk too, where it makes room (db/disk-space.ts). */
  freesSpace?: boolean;
}

export const SCHEDULER_BEAT = "scheduler";
/** src/schedule.ts runs tasks every few seconds; a minute without one finishing means the scheduler is stuck. */
export const SCHEDULER_STALE_MS = 60_000;

/** Runs every task once, through the writer (also at start-up, so state is right at once). */
export async function runTasks(deps: Deps, tasks: readonly PeriodicTask[]): Promise<void> {
  for (const task of tasks) await runTask(deps, task);
}

/** `tick`: the scheduled second, when the schedule runs it (null: asked for, at start-up or by a test). */
export async function runTask(deps: Deps, task: PeriodicTask, tick: number | null = null): Promise<void> {
  try {
    await deps.writer.write(
      async () => {
        if (task.everyInstance || (await onceAcrossInstances(deps.db, deps.store, task.name, tick))) await task.run(deps);
      },
      { freesSpace: task.freesSpace },
    );
    deps.heartbeats.set(SCHEDULER_BEAT, deps.clock.now());
  } catch (e) {
    // Refused for a full disk: the scheduler is alive, the disk is what /up/deep and the log name.
    if (e instanceof StorageFull) return void deps.heartbeats.set(SCHEDULER_BEAT, deps.clock.now());
    console.error(JSON.stringify({ level: "error", msg: "periodic task failed", task: task.name, error: String(e) }));
  }
}

/** Starts the @elysiajs/cron schedules; stop() ends them at shutdown. */
export function startScheduler(deps: Deps, tasks: readonly PeriodicTask[]): { stop: () => void } {
  let app = new Elysia();
  for (const task of tasks) {
    app = app.use(cron({ name: task.name, pattern: task.pattern, protect: true, run: () => void runTask(deps, task, tickOf(deps.clock.now())) })) as unknown as Elysia;
  }
  const store = app.store as { cron?: Record<string, { stop: () => void }> };
  return { stop: () => Object.values(store.cron ?? {}).forEach((c) => c.stop()) };
}
