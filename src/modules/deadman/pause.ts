import { eq } from "drizzle-orm";
import type { Ctx } from "../../deps";
import { notes } from "../../db/tables";
import { commit } from "../../http/commit";
import { ValidationFailed } from "../../http/errors";
import type { Reply } from "../../http/reply";
import type { NoteRecord } from "../notes/model";
import { readBody, toRecord, visibleNote } from "../notes/repo";
import { requireScope } from "../tokens/service";
import { spellChanges } from "./spell";

/**
 * POST /notes/{id}/pause: no alert of any kind until the stream's next write, which resumes
 * watching (deadmanOnAppend); a run under way, an alert held back and a spell's follow-ups are forgotten.
 */
export async function pauseStream({ ctx, id }: { ctx: Ctx; id: string }): Promise<Reply<NoteRecord>> {
  requireScope(ctx, "write");
  return commit(ctx, 200, async () => {
    const note = await visibleNote(ctx, id);
    if (note.kind !== "stream") throw ValidationFailed.field("id", "not_a_stream", "only a stream (append-only note) can be paused");
    const changes = { deadmanStatus: "paused" as const, runStartedAt: null, alertOwedAt: null, ...spellChanges(note.deadmanStatus, "paused", ctx.deps.clock.now()) };
    await ctx.deps.db.update(notes).set(changes).where(eq(notes.id, note.id));
    const next = { ...note, ...changes };
    return toRecord(ctx, next, await readBody(ctx.deps, next));
  });
}
