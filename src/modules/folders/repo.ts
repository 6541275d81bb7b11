import { and, eq } from "drizzle-orm";
import type { Deps } from "../../deps";
import { folders } from "../../db/schema";
import { ValidationFailed } from "../../http/errors";

/** A folder named in a request body must be one of this workspace's. */
export function assertFolderInWorkspace(deps: Deps, workspaceId: string, folderId: string, field: string): void {
  const found = deps.db
    .select({ id: folders.id })
    .from(folders)
    .where(and(eq(folders.id, folderId), eq(folders.workspaceId, workspaceId)))
    .get();
  if (!found) throw ValidationFailed.field(field, "not_found", `no folder ${folderId} in this workspace`);
}
