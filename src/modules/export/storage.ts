import { mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { and, eq, inArray } from "drizzle-orm";
import type { Deps } from "../../deps";
import { databasePath } from "../../db/client";
import { exportFiles } from "../../db/tables";
import { pgSnapshots, sqliteSnapshots, type SnapshotSource } from "./snapshot";

/** Where a zip is written while it is built. */
export interface ZipSink {
  /** Takes the next bytes of the zip (kept until they are stored). */
  write(chunk: Uint8Array): void;
  /** Bytes taken and not yet stored: the builder waits on flush() when they pile up. */
  readonly pending: number;
  /** Stores what was taken so far. */
  flush(): Promise<void>;
  /** Stores the rest; what exports.file_path keeps (the file's path), or null where the zip is no file. */
  finish(): Promise<string | null>;
  /** Throws away what was stored of this attempt. */
  abort(): Promise<void>;
}

/** What the store needs of an export's row. */
export interface StoredExport {
  id: string;
  filePath: string | null;
  sizeBytes: number | null;
}

/** Where finished exports live, from the build to the download and their deletion. */
export interface ExportFiles {
  /** Begins an export's zip afresh: what an earlier, failed attempt left of it goes. */
  create(exportId: string): Promise<ZipSink>;
  /** The finished zip's bytes for a download, or null when there is none. */
  open(row: StoredExport): Promise<{ body: Blob | ReadableStream<Uint8Array>; size: number | null } | null>;
  /** Deletes the zips of these exports, inside the caller's write (a file goes once it commits). */
  remove(rows: Pick<StoredExport, "id" | "filePath">[]): Promise<void>;
}

/** How exports read the database and keep their zips, for the database this process uses. */
export interface ExportStorage {
  /** One consistent snapshot of the database, for reading an account (outside any write). */
  snapshot: SnapshotSource;
  files: ExportFiles;
}

/**
 * SQLite: a read-only connection of its own for the snapshot, and the zip a file under
 * <data dir>/exports (one process serves it). PostgreSQL: a reserved connection in a snapshot
 * transaction, and the zip in the database (export_files, 1 MB parts), so that whichever
 * instance takes the download has it.
 */
export function exportStorage(deps: Deps): ExportStorage {
  const store = deps.store;
  if (store.kind === "postgres") return { snapshot: pgSnapshots(store.pool), files: databaseFiles(deps) };
  return { snapshot: sqliteSnapshots(databasePath(store.dataDir)), files: diskFiles(deps) };
}

/** The size of a part of a zip kept in export_files. */
export const PART_BYTES = 1 << 20;

/** SQLite's: files under <data dir>/exports, written as `<id>.zip.partial` and renamed when done. */
function diskFiles(deps: Deps): ExportFiles {
  const dir = join(deps.config.dataDir, "exports");
  return {
    create: async (exportId) => {
      mkdirSync(dir, { recursive: true });
      const path = join(dir, `${exportId}.zip`);
      const partial = `${path}.partial`;
      const sink = Bun.file(partial).writer();
      let pending = 0;
      return {
        write: (chunk) => {
          pending += chunk.length;
          void sink.write(chunk);
        },
        get pending() {
          return pending;
        },
        flush: async () => {
          await sink.flush();
          pending = 0;
        },
        finish: async () => {
          await sink.end();
          renameSync(partial, path);
          return path;
        },
        abort: async () => {
          await Promise.resolve(sink.end()).catch(() => {});
          rmSync(partial, { force: true });
        },
      };
    },
    open: async (row) => (row.filePath ? { body: Bun.file(row.filePath), size: row.sizeBytes } : null),
    remove: async (rows) => {
      // A building export has no path yet, but its file appears under its id.
      const paths = rows.flatMap((r) => [r.filePath ?? join(dir, `${r.id}.zip`), join(dir, `${r.id}.zip.partial`)]);
      deps.writer.afterCommit(() => {
        for (const p of paths) rmSync(p, { force: true });
      });
    },
  };
}

/**
 * PostgreSQL's: the zip in export_files, in parts of PART_BYTES (the last one shorter), each
 * stored by a write of its own as it fills; the download streams them part by part.
 */
function databaseFiles(deps: Deps): ExportFiles {
  return {
    create: async (exportId) => {
      await deps.writer.write(() => deps.db.delete(exportFiles).where(eq(exportFiles.exportId, exportId)));
      return new PartSink(deps, exportId);
    },
    open: async (row) => {
      const part = async (n: number): Promise<Buffer | undefined> =>
        (await deps.db.select({ data: exportFiles.data }).from(exportFiles).where(and(eq(exportFiles.exportId, row.id), eq(exportFiles.part, n))))[0]?.data;
      const first = await part(0);
      if (!first) return null;
      let next = 0;
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull: async (controller) => {
          const data = next === 0 ? first : await part(next);
          next++;
          if (data) {
            sent += data.length;
            controller.enqueue(new Uint8Array(data.buffer, data.byteOffset, data.length));
          } else if (row.sizeBytes !== null && sent < row.sizeBytes) {
            // Deleted while it was being sent (expired, or its account deleted): not a whole zip.
            controller.error(new Error(`export ${row.id} lost its part ${next - 1} during the download`));
          } else controller.close();
        },
      });
      return { body, size: row.sizeBytes };
    },
    remove: async (rows) => {
      if (rows.length) await deps.db.delete(exportFiles).where(inArray(exportFiles.exportId, rows.map((r) => r.id)));
    },
  };
}

/** Cuts what the zip writes into parts of PART_BYTES and stores each, one at a time, in order. */
class PartSink implements ZipSink {
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  private queued = 0;
  private part = 0;
  private stored: Promise<void> = Promise.resolve();
  private failure: unknown = null;

  constructor(
    private readonly deps: Deps,
    private readonly exportId: string,
  ) {}

  get pending(): number {
    return this.buffered + this.queued;
  }

  write(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (this.buffered >= PART_BYTES) this.cut(PART_BYTES);
  }

  async flush(): Promise<void> {
    await this.stored;
    if (this.failure) throw this.failure;
  }

  async finish(): Promise<null> {
    if (this.buffered > 0) this.cut(this.buffered);
    await this.flush();
    return null;
  }

  async abort(): Promise<void> {
    await this.stored;
    this.chunks = [];
    this.buffered = 0;
    await this.deps.writer.write(() => this.deps.db.delete(exportFiles).where(eq(exportFiles.exportId, this.exportId)));
  }

  /** Takes the first `size` bytes buffered as the next part and queues its insert. */
  private cut(size: number): void {
    const data = Buffer.allocUnsafe(size);
    let filled = 0;
    while (filled < size) {
      const head = this.chunks[0]!;
      const take = Math.min(head.length, size - filled);
      data.set(take === head.length ? head : head.subarray(0, take), filled);
      filled += take;
      if (take === head.length) this.chunks.shift();
      else this.chunks[0] = head.subarray(take);
    }
    this.buffered -= size;
    this.queued += size;
    const part = this.part++;
    const { deps, exportId } = this;
    this.stored = this.stored.then(async () => {
      if (this.failure) return;
      try {
        await deps.writer.write(() => deps.db.insert(exportFiles).values({ exportId, part, data }));
      } catch (e) {
        this.failure = e;
      } finally {
        this.queued -= size;
      }
    });
  }
}
