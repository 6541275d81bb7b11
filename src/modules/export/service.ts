import { and, desc, eq, gt, lte } from "drizzle-orm";
import { t } from "elysia";
import type { Ctx, Deps } from "../../deps";
import { commit } from "../../http/commit";
import type { Reply } from "../../http/reply";
import { mayNameRow } from "../../db/keys";
import { accounts, exportsTable } from "../../db/tables";
import { AppError, NotFound } from "../../http/errors";
import { mailOrigin } from "../../http/origin";
import { defineQueue } from "../../jobs/define-queue";
import { iso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { enqueueMail } from "../../mail/queue";
import { exportReady } from "../../mail/templates";
import { requireScope, requireUnpinned } from "../tokens/service";
import { exportStorage } from "./storage";
import { writeExportZip } from "./zip";

export const EXPORTS_PER_HOUR = 2;
export const LINK_VALID_MS = 24 * 3600 * 1000;
const HOUR = 3600 * 1000;

type ExportRow = typeof exportsTable.$inferSelect;

/** `origin`: publicOrigin() for an answer, mailOrigin() for the mail (http/origin.ts). */
export function downloadUrl(id: string, origin: string): string {
  return `${origin}/api/v1/export/${id}/download`;
}

function toRecord(deps: Deps, row: ExportRow, origin: string) {
  const live = row.status === "ready" && row.expiresAt !== null && row.expiresAt > deps.clock.now();
  return {
    id: row.id,
    status: row.status === "ready" && !live ? ("expired" as const) : row.status,
    created_at: iso(row.createdAt),
    completed_at: row.completedAt === null ? null : iso(row.completedAt),
    expires_at: row.expiresAt === null ? null : iso(row.expiresAt),
    notes: row.notes,
    size_bytes: row.sizeBytes,
    download_url: live ? downloadUrl(row.id, origin) : null,
    error: row.error,
  };
}

/**
 * Queues a full-account export. Reading is enough: a lapsed, read-only account can export.
 * Two an hour per account, counted from the exports themselves, so a restart does not reset it.
 * `origin` is for the answer's links only; the ready mail's come from mailOrigin().
 */
export async function requestExport({ ctx, origin }: { ctx: Ctx; origin: string }): Promise<Reply<ReturnType<typeof toRecord>>> {
  requireScope(ctx, "read");
  requireUnpinned(ctx, "export the whole account");
  const { deps, principal } = ctx;
  return commit(ctx, 202, async () => {
    const now = deps.clock.now();
    const recent = await deps.db
      .select({ createdAt: exportsTable.createdAt })
      .from(exportsTable)
      .where(and(eq(exportsTable.accountId, principal.accountId), gt(exportsTable.createdAt, now - HOUR)))
      .orderBy(exportsTable.createdAt);
    if (recent.length >= EXPORTS_PER_HOUR) {
      const retry = Math.max(1, Math.ceil((recent[0]!.createdAt + HOUR - now) / 1000));
      throw new AppError("rate_limited", `at most ${EXPORTS_PER_HOUR} exports an hour; the next one is possible in ${retry} s`, undefined, {
        "retry-after": String(retry),
      });
    }
    const row: ExportRow = {
      id: newId("exp"),
      workspaceId: principal.workspaceId,
      accountId: principal.accountId,
      status: "queued",
      filePath: null,
      sizeBytes: null,
      notes: null,
      error: null,
      createdAt: now,
      completedAt: null,
      expiresAt: null,
    };
    await deps.db.insert(exportsTable).values(row);
    await exportQueue.enqueue(deps, { exportId: row.id }, { maxAttempts: 3 });
    return toRecord(deps, row, origin);
  });
}

/** The workspace's latest exports, newest first, whatever their state. */
export async function recentExports(deps: Deps, workspaceId: string, limit: number): Promise<ExportRow[]> {
  return deps.db.select().from(exportsTable).where(eq(exportsTable.workspaceId, workspaceId)).orderBy(desc(exportsTable.createdAt)).limit(limit);
}

/** An export of the caller's workspace; any other id is the same 404 as a missing one. */
async function visibleExport(ctx: Ctx, id: string): Promise<ExportRow> {
  if (!mayNameRow(id)) throw new NotFound("export");
  const [row] = await ctx.deps.db
    .select()
    .from(exportsTable)
    .where(and(eq(exportsTable.id, id), eq(exportsTable.workspaceId, ctx.principal.workspaceId)));
  if (!row) throw new NotFound("export");
  return row;
}

export async function getExport({ ctx, id, origin }: { ctx: Ctx; id: string; origin: string }): Promise<ReturnType<typeof toRecord>> {
  requireScope(ctx, "read");
  requireUnpinned(ctx, "see account exports");
  return toRecord(ctx.deps, await visibleExport(ctx, id), origin);
}

/**
 * The zip, for the workspace it was made of (its owner's session, or a read token of the
 * workspace, which for a team is any member's), until the link expires; afterwards the same 404
 * as for anyone else. Served by whichever instance takes the request (storage.ts).
 */
export async function exportFile({ ctx, id }: { ctx: Ctx; id: string }): Promise<Response> {
  requireScope(ctx, "read");
  requireUnpinned(ctx, "download account exports");
  const row = await visibleExport(ctx, id);
  if (row.status !== "ready" || row.expiresAt === null || row.expiresAt <= ctx.deps.clock.now()) {
    throw new NotFound("export");
  }
  const zip = await exportStorage(ctx.deps).files.open(row);
  if (!zip) throw new NotFound("export");
  return new Response(zip.body, {
    headers: {
      "content-type": "application/zip",
      "content-disposition": `attachment; filename="notestream-export-${iso(row.completedAt!).slice(0, 10)}.zip"`,
      ...(zip.size === null ? {} : { "content-length": String(zip.size) }),
    },
  });
}

export const ExportJob = t.Object({ exportId: t.String() });
export type ExportJob = typeof ExportJob.static;

export const exportQueue = defineQueue("export", ExportJob, {
  run: async (deps, { exportId }) => {
    const [row] = await deps.db.select().from(exportsTable).where(eq(exportsTable.id, exportId));
    if (!row || row.status === "ready") return { ok: true };
    await deps.writer.write(async () => {
      await deps.db.update(exportsTable).set({ status: "building" }).where(eq(exportsTable.id, exportId));
    });
    // The export reads its own snapshot of everything committed so far.
    const built = await writeExportZip(exportStorage(deps), exportId, row.workspaceId, iso(deps.clock.now()));
    return () => finishExport(deps, exportId, built);
  },
  onFailed: async (deps, { exportId }, error) => {
    await exportStorage(deps).files.remove([{ id: exportId, filePath: null }]);
    await deps.db.update(exportsTable).set({ status: "failed", error: error.slice(0, 500) }).where(eq(exportsTable.id, exportId));
  },
});

async function finishExport(deps: Deps, id: string, built: { filePath: string | null; sizeBytes: number; notes: number }) {
  const now = deps.clock.now();
  const expiresAt = now + LINK_VALID_MS;
  await deps.db
    .update(exportsTable)
    .set({ status: "ready", filePath: built.filePath, sizeBytes: built.sizeBytes, notes: built.notes, completedAt: now, expiresAt, error: null })
    .where(eq(exportsTable.id, id));
  const [row] = await deps.db
    .select({ email: accounts.email })
    .from(exportsTable)
    .innerJoin(accounts, eq(accounts.id, exportsTable.accountId))
    .where(eq(exportsTable.id, id));
  // The account was deleted while its export was being built: nobody to mail, nothing to keep.
  if (!row) {
    await exportStorage(deps).files.remove([{ id, filePath: built.filePath }]);
    return { ok: true as const };
  }
  const base = mailOrigin(deps);
  await enqueueMail(
    deps,
    exportReady({ to: row.email, url: `${base}/exports/${id}/download`, apiUrl: downloadUrl(id, base), expiresAt: iso(expiresAt), notes: built.notes, sizeBytes: built.sizeBytes }),
  );
  return { ok: true as const };
}

/** Links past their 24 hours: the zip goes, the export says expired (a periodic task, inside a write). */
export async function expireExports(deps: Deps): Promise<number> {
  const due = await deps.db
    .select({ id: exportsTable.id, filePath: exportsTable.filePath })
    .from(exportsTable)
    .where(and(eq(exportsTable.status, "ready"), lte(exportsTable.expiresAt, deps.clock.now())));
  await exportStorage(deps).files.remove(due);
  for (const e of due) {
    await deps.db.update(exportsTable).set({ status: "expired", filePath: null }).where(eq(exportsTable.id, e.id));
  }
  return due.length;
}

