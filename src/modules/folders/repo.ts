import { and, asc, eq } from "drizzle-orm";
import type { Deps } from "../../deps";
import { folders } from "../../db/tables";
import { ValidationFailed } from "../../http/errors";

// Ids are minted as fold_ and 20 base62 characters; the bound is looser so a longer id minted one
// day still passes, and tight enough that no empty, huge or control-laden string reaches a query.
const FOLDER_ID = /^fold_[0-9A-Za-z]{1,64}$/;

/** The one rule for a folder id a client sends, in a body, a filter or an MCP call. */
export function assertFolderIdWellFormed(folderId: string, field: string): void {
  if (!FOLDER_ID.test(folderId)) throw ValidationFailed.field(field, "invalid", "is not a folder id (fold_ followed by letters and digits)");
}

/**
 * A folder named in a write must be one of this workspace's. Only null and undefined mean "no
 * folder": deciding that here, not by each caller's truthiness test, is what keeps "" from
 * reaching the foreign key.
 */
export async function assertFolderInWorkspace(deps: Deps, workspaceId: string, folderId: string | null | undefined, field: string): Promise<void> {
  if (folderId === null || folderId === undefined) return;
  assertFolderIdWellFormed(folderId, field);
  const [found] = await deps.db
    .select({ id: folders.id })
    .from(folders)
    .where(and(eq(folders.id, folderId), eq(folders.workspaceId, workspaceId)));
  if (!found) throw ValidationFailed.field(field, "not_found", `no folder ${folderId} in this workspace`);
}

/** The workspace's folders by name, each with how many notes outside the trash it holds. */
export async function foldersWithNoteCounts(deps: Deps, workspaceId: string): Promise<{ id: string; name: string; n: number }[]> {
  return deps.db
    .select({ id: folders.id, name: folders.name, n: folders.noteCount })
    .from(folders)
    .where(eq(folders.workspaceId, workspaceId))
    .orderBy(asc(folders.nameKey));
}

/**
 * How many notes outside the trash a folder of this workspace holds (0 for any other id): kept
 * on its row by triggers on notes (migrations/0018), so the same cost at any size.
 */
export async function folderNoteCount(deps: Deps, workspaceId: string, folderId: string): Promise<number> {
  const [row] = await deps.db
    .select({ n: folders.noteCount })
    .from(folders)
    .where(and(eq(folders.id, folderId), eq(folders.workspaceId, workspaceId)));
  return row?.n ?? 0;
}

/** The workspace's folders by name. */
export async function folderNames(deps: Deps, workspaceId: string): Promise<{ id: string; name: string }[]> {
  return deps.db.select({ id: folders.id, name: folders.name }).from(folders).where(eq(folders.workspaceId, workspaceId)).orderBy(asc(folders.nameKey));
}
