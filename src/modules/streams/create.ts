import type { Ctx } from "../../deps";
import { notes } from "../../db/tables";
import { newNoteRow, streamByFilename, type NoteRow } from "../notes/repo";
import { writableWorkspace } from "../notes/service";
import { requireScope, requireUnpinned } from "../tokens/service";
import { assertNoteSlots } from "../workspaces/caps";
import { tierOf } from "../workspaces/repo";
import { validateFilename } from "./append/service";

/**
 * A stream that exists before its first line, so its name can be handed out with a token and its
 * page followed while the first append is still on its way (the onboarding's). The rules of a
 * first append hold: the filename's, a writable workspace, a free note slot. A stream of that name
 * already there is returned as it is. Runs inside a write.
 */
export async function createStream(ctx: Ctx, filename: string): Promise<{ note: NoteRow; created: boolean }> {
  requireScope(ctx, "append");
  requireUnpinned(ctx, "create streams");
  validateFilename(filename);
  const { deps } = ctx;
  const existing = await streamByFilename(deps, ctx.principal.workspaceId, filename);
  if (existing) return { note: existing, created: false };
  const ws = await writableWorkspace(ctx);
  await assertNoteSlots(deps, ws, tierOf(deps, ws), "plain");
  const note = newNoteRow({ workspaceId: ws.id, kind: "stream", filename, title: filename }, deps.clock.now());
  await deps.db.insert(notes).values(note);

  return { note, created: true };
}
