import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { mkdirSync, renameSync } from "node:fs";
import { dirname } from "node:path";
import { Zip, ZipDeflate } from "fflate";

interface NoteEntry {
  id: string;
  kind: string;
  format: string;
  title: string;
  filename: string | null;
  folder_id: string | null;
  body: string | null;
  byte_size: number;
  created_at: number;
  updated_at: number;
}

const encoder = new TextEncoder();

/** A file or folder name that every unzip tool accepts: no slashes, controls or reserved names. */
export function safeName(name: string, fallback: string): string {
  const cleaned = name
    .replace(/[\p{Cc}\p{Cf}]/gu, "")
    .replace(/[\\/:*?"<>|]/g, "_")
    .replace(/^[.\s]+|[.\s]+$/g, "")
    .slice(0, 120);
  return cleaned || fallback;
}

/**
 * Writes the workspace's notes as a zip: `<folder>/<title>.txt` (unfiled notes at the top), plus
 * manifest.json. Reads from its own read-only connection inside one read transaction, so the
 * export is one consistent snapshot while writes go on; a note at a time, chunk by chunk, with
 * the file flushed after each note, so an account is never held in memory.
 *
 * SQLite only: its own read-only connection to the database file (bun:sqlite, `BEGIN` for the
 * snapshot, rows streamed with iterate()); the SQL itself is in the subset both databases share.
 * PostgreSQL needs its own reader (a snapshot transaction on a connection of its own).
 */
export async function writeExportZip(dbPath: string, workspaceId: string, outPath: string, exportedAt: string) {
  mkdirSync(dirname(outPath), { recursive: true });
  const partial = `${outPath}.partial`;
  const sink = Bun.file(partial).writer();
  let size = 0;
  let failure: Error | null = null;
  const zip = new Zip((err, chunk) => {
    if (err) failure = err;
    else {
      size += chunk.length;
      void sink.write(chunk);
    }
  });
  const db = new Database(dbPath, { readonly: true });
  try {
    db.run("BEGIN");
    const ws = db.query<{ id: string; name: string; kind: string; plan: string }, [string]>("SELECT id, name, kind, plan FROM workspaces WHERE id = ?").get(workspaceId)!;
    const folders = db.query<{ id: string; name: string }, [string]>("SELECT id, name FROM folders WHERE workspace_id = ? ORDER BY name_key").all(workspaceId);
    const folderPath = new Map<string, string>();
    const usedFolders = new Set<string>();
    for (const f of folders) folderPath.set(f.id, unique(usedFolders, safeName(f.name, "folder")));
    const notes = db
      .query<NoteEntry, [string]>(
        `SELECT id, kind, format, title, filename, folder_id, CASE WHEN kind = 'editable' THEN body END AS body, byte_size, created_at, updated_at
         FROM notes WHERE workspace_id = ? AND trashed_at IS NULL ORDER BY created_at, id`,
      )
      .iterate(workspaceId);
    const chunks = db.query<{ text: string }, [string]>("SELECT text FROM note_chunks WHERE note_id = ? ORDER BY seq");
    const usedPaths = new Set<string>();
    const manifest: Record<string, unknown>[] = [];
    for (const n of notes) {
      const folder = n.folder_id ? folderPath.get(n.folder_id) : undefined;
      const base = safeName(n.filename ?? n.title, n.id);
      const path = unique(usedPaths, folder ? `${folder}/${base}.txt` : `${base}.txt`);
      const file = new ZipDeflate(path, { level: 6 });
      zip.add(file);
      const hash = createHash("sha256");
      let bytes = 0;
      const push = (text: string) => {
        const data = encoder.encode(text);
        hash.update(data);
        bytes += data.length;
        file.push(data);
      };
      if (n.kind === "editable") push(n.body ?? "");
      else for (const c of chunks.iterate(n.id)) push(c.text);
      file.push(new Uint8Array(0), true);
      // Rich notes also come as DOCX and PDF renderings of their text.
      const renderings: string[] = [];
      if (n.format === "rich") {
        const { renderDocx, renderPdf } = await import("../notes/render");
        for (const [ext, render] of [["docx", renderDocx], ["pdf", renderPdf]] as const) {
          const extra = unique(usedPaths, path.replace(/\.txt$/, `.${ext}`));
          const f = new ZipDeflate(extra, { level: 6 });
          zip.add(f);
          f.push(await render(n.title, n.body ?? ""), true);
          renderings.push(extra);
        }
      }
      await sink.flush();
      manifest.push({
        id: n.id,
        path,
        kind: n.kind,
        format: n.format,
        title: n.title,
        filename: n.filename,
        folder_id: n.folder_id,
        byte_size: bytes,
        sha256: hash.digest("hex"),
        ...(renderings.length ? { renderings } : {}),
        created_at: new Date(n.created_at).toISOString(),
        updated_at: new Date(n.updated_at).toISOString(),
      });
    }
    const manifestFile = new ZipDeflate("manifest.json", { level: 6 });
    zip.add(manifestFile);
    manifestFile.push(
      encoder.encode(
        JSON.stringify(
          {
            format: 1,
            exported_at: exportedAt,
            workspace: ws,
            folders: folders.map((f) => ({ id: f.id, name: f.name, path: folderPath.get(f.id) })),
            notes: manifest,
          },
          null,
          2,
        ),
      ),
      true,
    );
    zip.end();
    db.run("COMMIT");
    await sink.end();
    if (failure) throw failure;
    renameSync(partial, outPath);
    return { sizeBytes: size, notes: manifest.length };
  } finally {
    db.close();
  }
}

function unique(used: Set<string>, path: string): string {
  let candidate = path;
  for (let i = 2; used.has(candidate.toLowerCase()); i++) {
    const dot = path.lastIndexOf(".");
    candidate = dot > path.lastIndexOf("/") ? `${path.slice(0, dot)} (${i})${path.slice(dot)}` : `${path} (${i})`;
  }
  used.add(candidate.toLowerCase());
  return candidate;
}
