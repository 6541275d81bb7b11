import { and, count, eq, sql, type SQL } from "drizzle-orm";
import type { Ctx } from "../../deps";
import { notes } from "../../db/tables";
import type { Page } from "../../lib/pagination";
import { listNoteRows, noteListConds, type NoteListFilter, type NoteMeta } from "../notes/repo";

/**
 * The status board of the notes list: what each stream's state means at a glance, and the
 * queries behind its filters. "Needs attention" is written in SQL (`attentionWhere`, for the
 * filter and its count); test/integration/board.test.ts holds it to the health each row is drawn
 * with (`streamHealth`, `webhookHealth`).
 */

/** The dead-man column: `full` wins (a full stream's writers are refused, which also makes it silent), then a failed run, then the deadline. */
export type StreamHealth = "off" | "ok" | "late" | "failing" | "paused" | "full";
export type WebhookHealth = "none" | "ok" | "failing" | "disabled";

export const BOARD_FILTERS = ["all", "attention", "streams", "plain", "rich"] as const;
export type BoardFilter = (typeof BOARD_FILTERS)[number];
export type BoardCounts = Record<BoardFilter, number>;

export function isBoardFilter(v: string | null): v is BoardFilter {
  return (BOARD_FILTERS as readonly (string | null)[]).includes(v);
}

type HealthFields = Pick<NoteMeta, "kind" | "deadmanStatus" | "fullSince" | "retention" | "byteSize" | "webhookStatus" | "webhookFailures">;

/**
 * A `reject` stream at its cap is full before its first refusal: the next line, which is at
 * least its newline, will be refused. `full_since` marks the refusals themselves.
 */
function isFull(n: HealthFields, cap: number | null): boolean {
  return n.fullSince !== null || (n.retention === "reject" && cap !== null && n.byteSize >= cap);
}

export function streamHealth(n: HealthFields, cap: number | null): StreamHealth {
  return isFull(n, cap) ? "full" : n.deadmanStatus;
}

/** Consecutive failed deliveries are counted on the note (a success resets them; ten disable the webhook). */
export function webhookHealth(n: Pick<NoteMeta, "webhookStatus" | "webhookFailures">): WebhookHealth {
  if (n.webhookStatus === "none") return "none";
  if (n.webhookStatus === "disabled") return "disabled";
  return n.webhookFailures > 0 ? "failing" : "ok";
}

/** A stream that is late, failing or full, or whose webhook fails or is disabled. */
function attentionWhere(cap: number | null): SQL {
  const atCap = cap === null ? sql`` : sql` OR (${notes.retention} = 'reject' AND ${notes.byteSize} >= ${cap})`;
  return sql`(${notes.kind} = 'stream' AND (${notes.deadmanStatus} IN ('late', 'failing') OR ${notes.fullSince} IS NOT NULL${atCap}
    OR ${notes.webhookStatus} = 'disabled' OR (${notes.webhookStatus} = 'enabled' AND ${notes.webhookFailures} > 0)))`;
}

function filterWhere(show: BoardFilter, cap: number | null): SQL | undefined {
  switch (show) {
    case "attention":
      return attentionWhere(cap);
    case "streams":
      return eq(notes.kind, "stream");
    case "plain":
      return and(eq(notes.kind, "editable"), eq(notes.format, "plain"));
    case "rich":
      return and(eq(notes.kind, "editable"), eq(notes.format, "rich"));
    case "all":
      return undefined;
  }
}

export type BoardScope = Pick<NoteListFilter, "folderId" | "titleContains">;

/** One page of the board, newest change first, as the notes list orders it. */
export function boardRows(ctx: Ctx, scope: BoardScope & { show: BoardFilter }, cap: number | null, page: Page): Promise<{ rows: NoteMeta[]; total: number }> {
  return listNoteRows(ctx, { folderId: scope.folderId, titleContains: scope.titleContains, where: filterWhere(scope.show, cap) }, page);
}

/** How many notes each filter would show, in one pass over the workspace's notes. */
export async function boardCounts(ctx: Ctx, scope: BoardScope, cap: number | null): Promise<BoardCounts> {
  // A condition counted as CASE WHEN: PostgreSQL sums no booleans.
  const n = (f: BoardFilter) => sql<number>`coalesce(sum(CASE WHEN ${filterWhere(f, cap)} THEN 1 ELSE 0 END), 0)`;
  const [r] = await ctx.deps.db
    .select({ all: count(), attention: n("attention"), streams: n("streams"), plain: n("plain"), rich: n("rich") })
    .from(notes)
    .where(and(...noteListConds(ctx, scope)));
  return { all: r!.all, attention: Number(r!.attention), streams: Number(r!.streams), plain: Number(r!.plain), rich: Number(r!.rich) };

}
