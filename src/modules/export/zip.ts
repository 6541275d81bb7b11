import { createHash } from "node:crypto";
import { Zip, ZipDeflate } from "fflate";
import type { Snapshot } from "./snapshot";
import { PART_BYTES, type ExportStorage, type ZipSink } from "./storage";

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
 * Writes the workspace's notes as the zip of export `exportId`: `<folder>/<title>.txt` (unfiled
 * notes at the top), plus manifest.json. Reads one consistent snapshot of the database while
 * writes go on (`storage.snapshot`), a note at a time, chunk by chunk, and hands the zip to the
 * export's sink as it grows (`storage.files`), so an account is never held in memory. A failed
 * build leaves nothing behind.
 */
export async function writeExportZip(storage: ExportStorage, exportId: string, workspaceId: string, exportedAt: string) {
  const sink = await storage.files.create(exportId);
  try {
    const built = await storage.snapshot((snapshot) => buildZip(snapshot, workspaceId, sink, exportedAt));
    return { ...built, filePath: await sink.finish() };
  } catch (e) {
    await sink.abort();
    throw e;
  }
}

async function buildZip(db: Snapshot, workspaceId: string, sink: ZipSink, exportedAt: string) {
  let size = 0;
  let failure: Error | null = null;
  const zip = new Zip((err, chunk) => {
    if (err) failure = err;
    else {
      size += chunk.length;
      sink.write(chunk);
    }
  });
  const ws = (await db.workspace(workspaceId))!;
  const folders = await db.folders(workspaceId);
  const folderPath = new Map<string, string>();
  const usedFolders = new Set<string>();
  for (const f of folders) folderPath.set(f.id, unique(usedFolders, safeName(f.name, "folder")));
  const usedPaths = new Set<string>();
  const manifest: Record<string, unknown>[] = [];
  for await (const n of db.notes(workspaceId)) {
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
    else {
      for await (const text of db.chunks(n.id)) {
        push(text);
        // A long stream is stored as it is read, not held until its end.
        if (sink.pending >= PART_BYTES) await sink.flush();
      }
    }
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
  if (failure) throw failure;
  return { sizeBytes: size, notes: manifest.length };
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
