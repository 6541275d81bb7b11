import { and, eq, isNull } from "drizzle-orm";
import type { Ctx, Deps } from "../../deps";
import { notes } from "../../db/tables";
import { commit } from "../../http/commit";
import { NotFound } from "../../http/errors";
import type { Reply } from "../../http/reply";
import { sha256Hex } from "../../lib/secrets";
import { neverWritten } from "../deadman/watch";
import { visibleNote, type NoteRow } from "../notes/repo";
import { newStreamSecret, storeStreamSecret } from "../notes/stream-secret";
import { requireScope } from "../tokens/service";
import type { BadgeJson, BadgeMessage, BadgeUrls } from "./model";

export const BADGE_TOKEN_PREFIX = "bdg_";

/** shields.io's color names, one per message. */
const COLOR: Record<BadgeMessage, string> = { up: "brightgreen", late: "orange", failing: "red", paused: "lightgrey", new: "blue" };

/**
 * Creates or rotates a stream's badge: a new token each time, only its hash kept, so the old URLs
 * stop answering at once (storeStreamSecret). The checks are a PATCH's: the write scope and a token that sees the
 * note (a token pinned to this stream may make its badge).
 */
export async function rotateBadge({ ctx, noteId, baseUrl }: { ctx: Ctx; noteId: string; baseUrl: string }): Promise<Reply<BadgeUrls>> {
  requireScope(ctx, "write");
  const token = newStreamSecret(BADGE_TOKEN_PREFIX);
  return commit(ctx, 201, async () => {
    await storeStreamSecret(ctx, noteId, "badgeTokenHash", token, "a badge shows a stream's status; this note is editable");
    return { svg_url: `${baseUrl}/badge/${token}.svg`, json_url: `${baseUrl}/badge/${token}.json` };
  });
}

export async function deleteBadge({ ctx, noteId }: { ctx: Ctx; noteId: string }): Promise<Reply<{ id: string; badge_enabled: false }>> {
  requireScope(ctx, "write");
  return commit(ctx, 200, async () => {
    const note = await visibleNote(ctx, noteId);
    await ctx.deps.db.update(notes).set({ badgeTokenHash: null }).where(eq(notes.id, note.id));
    return { id: note.id, badge_enabled: false as const };
  });
}

type BadgeFields = Pick<NoteRow, "deadmanStatus" | "byteSize" | "lastWriteAt" | "createdAt">;

/**
 * The dead-man column of the status board (board.ts `streamHealth`) in a badge's words. A stream
 * never written to is `new`, watched or not; once written, `up` unless its watcher says late or
 * failing. `full` is left out: a full stream's refused writes are missed writes, so a watched one
 * goes late at its deadline. The switch is exhaustive, so a new dead-man status cannot reach a
 * badge without a word here.
 */
export function badgeMessage(n: BadgeFields): BadgeMessage {
  switch (n.deadmanStatus) {
    case "late":
      return "late";
    case "failing":
      return "failing";
    case "paused":
      return "paused";
    case "ok":
    case "off":
      return neverWritten(n) ? "new" : "up";
  }
}

/**
 * GET /badge/{token}.svg|.json: the badge of the live stream a token opens. The token is looked up
 * by its hash through a unique index, as an inbox's is, so no secret is compared in code. A trashed
 * stream's badge is gone with it. Nothing of the stream's content (lines, size) is read out.
 */
export async function readBadge(deps: Deps, token: string): Promise<BadgeJson> {
  if (!token.startsWith(BADGE_TOKEN_PREFIX)) throw new NotFound("badge");
  const [note] = await deps.db
    .select({ filename: notes.filename, title: notes.title, deadmanStatus: notes.deadmanStatus, byteSize: notes.byteSize, lastWriteAt: notes.lastWriteAt, createdAt: notes.createdAt })
    .from(notes)
    .where(and(eq(notes.badgeTokenHash, sha256Hex(token)), isNull(notes.trashedAt)))
    .limit(1);
  if (!note) throw new NotFound("badge");
  return badgeOf(note);
}

/** The badge a stream shows now: what its URLs answer, and what its settings page draws. */
export function badgeOf(note: BadgeFields & Pick<NoteRow, "filename" | "title">): BadgeJson {
  const message = badgeMessage(note);
  // The filename, as a stream's writers name it (`notestream append FILE`); a title is free text and may be long.
  return { schemaVersion: 1, label: note.filename ?? note.title, message, color: COLOR[message] };
}
