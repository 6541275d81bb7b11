import { eq, sql } from "drizzle-orm";
import type { Deps } from "../../deps";
import { inboxDeliveries } from "../../db/tables";

/**
 * The stored bodies' bytes, summed over the rows an aggregate query groups: `length` of a blob
 * (SQLite) or a bytea (PostgreSQL) is its size in bytes. PostgreSQL's sum is a bigint, which its
 * driver returns as a string: read as a number.
 */
export const storedBytes = sql<number>`coalesce(sum(length(${inboxDeliveries.body})), 0)`.mapWith(Number);

/**
 * Raw inbox bodies are kept for replay, on the workspace's disk, so they count as its storage
 * from the moment they are stored until their rows go: pruned, or deleted with their note.
 * The row holds the body, so `length(body)` is always what was counted for it.
 */
export async function inboxBodyBytes(deps: Deps, noteId: string): Promise<number> {
  const [r] = await deps.db.select({ bytes: storedBytes }).from(inboxDeliveries).where(eq(inboxDeliveries.noteId, noteId));
  return r!.bytes;
}
