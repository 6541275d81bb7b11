import { and, eq, isNull, lt } from "drizzle-orm";
import type { Deps } from "../../deps";
import { ackLinks, notes } from "../../db/tables";
import { mailOrigin } from "../../http/origin";
import { randomBase62 } from "../../lib/random";
import { sha256Hex } from "../../lib/secrets";
import type { NoteRow } from "../notes/repo";

/** How long an alert mail's acknowledge link is kept: long past any spell worth acknowledging. */
export const ACK_LINK_DAYS = 30;
const PREFIX = "ack_";

/**
 * A new acknowledge link for an alert mail about this spell (inside the write that queues the
 * mail). Each mail has its own link, and only its SHA-256 is stored, as for every URL secret.
 */
export async function mintAckUrl(deps: Deps, n: Pick<NoteRow, "id" | "spellStartedAt">): Promise<string> {
  const token = PREFIX + randomBase62(32);
  await deps.db.insert(ackLinks).values({ tokenHash: sha256Hex(token), noteId: n.id, spellStartedAt: Number(n.spellStartedAt), createdAt: deps.clock.now() });
  return `${mailOrigin(deps)}/ack/${token}`;
}

/** The stream a link names and the spell it was sent for; null for an unknown, expired or trashed one. */
export async function ackLinkTarget(deps: Deps, token: string): Promise<{ note: NoteRow; spellStartedAt: number } | null> {
  if (!token.startsWith(PREFIX) || token.length > 64) return null;
  const [row] = await deps.db
    .select({ note: notes, spellStartedAt: ackLinks.spellStartedAt, createdAt: ackLinks.createdAt })
    .from(ackLinks)
    .innerJoin(notes, eq(notes.id, ackLinks.noteId))
    .where(and(eq(ackLinks.tokenHash, sha256Hex(token)), isNull(notes.trashedAt)));
  if (!row || Number(row.createdAt) < deps.clock.now() - ACK_LINK_DAYS * 86_400_000) return null;
  return { note: row.note, spellStartedAt: Number(row.spellStartedAt) };
}

/** The hourly prune: links older than ACK_LINK_DAYS go. */
export async function pruneAckLinks(deps: Deps): Promise<void> {
  await deps.db.delete(ackLinks).where(lt(ackLinks.createdAt, deps.clock.now() - ACK_LINK_DAYS * 86_400_000));
}
