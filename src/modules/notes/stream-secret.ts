import { eq } from "drizzle-orm";
import type { Ctx } from "../../deps";
import { notes } from "../../db/tables";
import { ValidationFailed } from "../../http/errors";
import { randomBase62 } from "../../lib/random";
import { sha256Hex } from "../../lib/secrets";
import { visibleNote } from "./repo";
import { writableWorkspace } from "./service";

/** A new secret for one of a stream's public URLs: its prefix and 32 base62 characters (about 190 bits). */
export function newStreamSecret(prefix: string): string {
  return prefix + randomBase62(32);
}

/**
 * Inside a write: keeps only the hash of a stream's new URL secret (an inbox's, a badge's), so the
 * old URL stops answering at once. The caller sees the note as its token does; an editable note
 * has no such URL (422 naming `id`, with `why`).
 */
export async function storeStreamSecret(ctx: Ctx, noteId: string, column: "inboxTokenHash" | "badgeTokenHash", secret: string, why: string): Promise<void> {
  const note = await visibleNote(ctx, noteId);
  if (note.kind !== "stream") throw ValidationFailed.field("id", "not_a_stream", why);
  await writableWorkspace(ctx);
  await ctx.deps.db.update(notes).set({ [column]: sha256Hex(secret) }).where(eq(notes.id, note.id));
}
