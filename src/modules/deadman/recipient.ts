import { eq } from "drizzle-orm";
import type { Deps } from "../../deps";
import { accounts, workspaces } from "../../db/tables";

/** Where a stream's alerts go: its alert_email, or the workspace owner's address. */
export async function recipient(deps: Deps, note: { alertEmail: string | null; workspaceId: string }): Promise<string> {
  if (note.alertEmail) return note.alertEmail;
  const [owner] = await deps.db
    .select({ email: accounts.email })
    .from(workspaces)
    .innerJoin(accounts, eq(accounts.id, workspaces.ownerId))
    .where(eq(workspaces.id, note.workspaceId));
  return owner!.email;
}
