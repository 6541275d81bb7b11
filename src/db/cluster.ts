import { eq } from "drizzle-orm";
import type { Db } from "./client";
import { sqlRows } from "./sql";
import { sharedDatabase, type Store } from "./store";
import { appMeta } from "./tables";

/**
 * Inside a write: whether this process should do the periodic work `name` now, so that work is done
 * once across every instance sharing the database. On PostgreSQL the first instance takes a
 * transaction-scoped advisory lock (tried, not waited for: whoever holds it is doing the work, and
 * it is released when that write commits). A scheduled run names its `tick` (the cron's second):
 * the first instance notes it in app_meta, and one whose timer fires later for the same tick (or
 * an earlier one) finds it there and leaves it. A run asked for outside the schedule (at start-up,
 * a test's) has no tick: it runs unless another instance is doing the task right now, as the
 * tasks' work is what is due, done once whoever runs it. On SQLite: always.
 */
export async function onceAcrossInstances(db: Db, store: Store, name: string, tick: number | null): Promise<boolean> {
  if (!sharedDatabase(store)) return true;
  const key = `task:${name}`;
  const [lock] = await sqlRows<{ ok: boolean }>(store, "SELECT pg_try_advisory_xact_lock(hashtext(?)) AS ok", [key]);
  if (!lock!.ok) return false;
  if (tick === null) return true;
  const [last] = await db.select({ value: appMeta.value }).from(appMeta).where(eq(appMeta.key, key));
  if (last && Number(last.value) >= tick) return false;
  await db.insert(appMeta).values({ key, value: String(tick) }).onConflictDoUpdate({ target: appMeta.key, set: { value: String(tick) } });
  return true;
}

/** The scheduled second a cron timer fired for, the same on every instance whose clock is within half a second. */
export function tickOf(now: number): number {
  return Math.round(now / 1000) * 1000;
}
