import { and, desc, eq, lt, or, sql, type SQL } from "drizzle-orm";
import type { Ctx, Deps } from "../../deps";
import { paged } from "../../db/paged";
import { apiErrors } from "../../db/tables";
import { iso } from "../../lib/clock";
import type { Page } from "../../lib/pagination";
import { requireScope } from "../tokens/service";

/** Entries older than this are pruned by the periodic job. */
export const ERROR_LOG_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Records a 4xx answered to an authenticated caller. Fire-and-forget through the writer, so it
 * joins whatever batch is next and never delays the answer.
 */
export function recordApiError(
  deps: Deps,
  e: { workspaceId: string; tokenId: string; method: string; path: string; status: number; code: string },
): void {
  const at = deps.clock.now();
  deps.writer
    .write(async () => {
      await deps.db.insert(apiErrors).values({ ...e, at });
    })
    .catch((err) => console.error(JSON.stringify({ level: "error", msg: "could not record an API error", error: String(err) })));
}

export async function listApiErrors({ ctx, page }: { ctx: Ctx; page: Page }) {
  requireScope(ctx, "read");
  const { principal } = ctx;
  const where = principal.noteId ? pinnedErrors(principal.workspaceId, principal.tokenId, principal.noteId) : eq(apiErrors.workspaceId, principal.workspaceId);
  const rows = ctx.deps.db.select().from(apiErrors).where(where).orderBy(desc(apiErrors.at), desc(apiErrors.id));
  const { items, total } = await paged(ctx.deps.db, { from: apiErrors, where, rows, page });
  return {
    total,
    items: items.map((r) => ({
      at: iso(r.at),
      method: r.method,
      path: r.path,
      status: r.status,
      code: r.code,
      // A pinned token learns no other token's id.
      token_id: principal.noteId && r.tokenId !== principal.tokenId ? null : r.tokenId,
    })),
  };
}

/**
 * A token pinned to one note sees its own errors and those of requests to its note's id, never
 * the paths (ids, filenames) other tokens used elsewhere in the workspace.
 */
function pinnedErrors(workspaceId: string, tokenId: string, noteId: string): SQL {
  const notePath = `/api/v1/notes/${noteId}`;
  return and(
    eq(apiErrors.workspaceId, workspaceId),
        // substr, not LIKE: an id's "_" would be a wildcard.
    or(eq(apiErrors.tokenId, tokenId), eq(apiErrors.path, notePath), sql`substr(${apiErrors.path}, 1, ${notePath.length + 1}) = ${`${notePath}/`}`),
  )!;
}

export async function pruneApiErrors(deps: Deps): Promise<void> {
  await deps.db.delete(apiErrors).where(lt(apiErrors.at, deps.clock.now() - ERROR_LOG_RETENTION_MS));
}


