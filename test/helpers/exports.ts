import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { exportFiles } from "../../src/db/tables";
import { onPostgres, type Harness } from "./harness";

/**
 * Where an export's zip is kept (src/modules/export/storage.ts): on SQLite a file under the data
 * dir, on PostgreSQL its parts in export_files (so any instance can serve it).
 */
export async function exportZipKept(h: Harness, exportId: string): Promise<boolean> {
  if (onPostgres) return (await h.deps.db.select({ part: exportFiles.part }).from(exportFiles).where(eq(exportFiles.exportId, exportId))).length > 0;
  return existsSync(join(h.dataDir, "exports", `${exportId}.zip`));
}

/** Every zip kept, of any export: the files of the exports dir, or the export ids in export_files. */
export async function exportZipsKept(h: Harness): Promise<string[]> {
  if (onPostgres) return [...new Set((await h.deps.db.select({ id: exportFiles.exportId }).from(exportFiles)).map((r) => r.id))];
  const dir = join(h.dataDir, "exports");
  return existsSync(dir) ? readdirSync(dir) : [];
}
