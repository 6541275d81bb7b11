/**
 * Full-account export: POST /api/v1/export queues a job that writes a zip of every note
 * (`<folder>/<title>.txt`, unfiled notes at the top, plus manifest.json), mails the download link,
 * and serves the file to the owner for 24 hours.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { unzipSync } from "fflate";
import { exportFiles, exportsTable, notes } from "../../src/db/tables";
import { runAllTasks } from "../../src/schedule";
import type { MailMessage } from "../../src/mail/mailer";
import { lapse } from "../../src/modules/accounts/lifecycle";
import { exportZipKept, exportZipsKept } from "../helpers/exports";
import { errorOf, harness, onPostgres, type Harness, type TestResponse } from "../helpers/harness";

const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;

let h: Harness;
let sent: MailMessage[];

async function setup(opts: Parameters<typeof harness>[0] = {}): Promise<void> {
  h = await harness(opts);
  sent = [];
  h.deps.mailer = {
    send: async (m) => {
      sent.push(m);
    },
  };
}

beforeEach(() => setup());
afterEach(() => h.close());

const utf8 = (s: string) => new TextEncoder().encode(s);
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

interface ManifestNote {
  id: string;
  path: string;
  kind: string;
  title: string;
  filename: string | null;
  folder_id: string | null;
  byte_size: number;
  sha256: string;
}

interface Manifest {
  format: number;
  exported_at: string;
  workspace: { id: string };
  folders: { id: string; name: string; path: string }[];
  notes: ManifestNote[];
}

const requestExport = (token: string) => h.request("POST", "/api/v1/export", { token });
const exportStatus = (token: string, id: string) => h.request("GET", `/api/v1/export/${id}`, { token });
const pathOf = (url: string) => new URL(url).pathname;

/** Queues an export, runs the jobs, and returns its status record once ready. */
async function readyExport(token: string): Promise<any> {
  const res = await requestExport(token);
  expect(res.status).toBe(202);
  const { id } = await res.json();
  await h.jobs.drain();
  const status = await exportStatus(token, id);
  expect(status.status).toBe(200);
  const record = await status.json();
  expect(record.status).toBe("ready");
  return record;
}

async function download(token: string, record: { download_url: string }): Promise<{ res: TestResponse; zip: Uint8Array }> {
  const res = await h.request("GET", pathOf(record.download_url), { token });
  return { res, zip: new Uint8Array(await res.arrayBuffer()) };
}

function unzip(zip: Uint8Array): { files: Record<string, Uint8Array>; manifest: Manifest } {
  const files = unzipSync(zip);
  expect(files["manifest.json"]).toBeDefined();
  const manifest = JSON.parse(new TextDecoder().decode(files["manifest.json"])) as Manifest;
  return { files, manifest };
}

/** Every manifest entry names a file of the zip whose size and hash match, and the zip holds nothing else. */
function expectManifestMatches(files: Record<string, Uint8Array>, manifest: Manifest): void {
  const paths = manifest.notes.map((n) => n.path);
  expect(new Set(paths.map((p) => p.toLowerCase())).size).toBe(paths.length);
  expect(Object.keys(files).sort()).toEqual([...paths, "manifest.json"].sort());
  for (const n of manifest.notes) {
    const data = files[n.path];
    expect(data, n.path).toBeDefined();
    expect(n.byte_size, n.path).toBe(data!.length);
    expect(n.sha256, n.path).toBe(sha256(data!));
  }
}

describe("export: request, build, mail, download", () => {
  test("a read token queues it (202); the job builds it; the status, the mail and the zip agree", async () => {
    const a = await h.account("dev");
    const read = await h.token(a, ["read"]);

    const res = await requestExport(read);
    expect(res.status).toBe(202);
    const queued = await res.json();
    expect(queued.id).toMatch(/^exp_/);
    expect(queued).toMatchObject({ status: "queued", download_url: null, completed_at: null, expires_at: null });

    await h.jobs.drain();
    const status = await exportStatus(read, queued.id);
    expect(status.status).toBe(200);
    const ready = await status.json();
    expect(ready).toMatchObject({ id: queued.id, status: "ready", notes: 0, error: null });
    expect(ready.size_bytes).toBeGreaterThan(0);
    expect(Date.parse(ready.completed_at)).toBeGreaterThanOrEqual(Date.parse(ready.created_at));
    expect(Date.parse(ready.expires_at)).toBe(Date.parse(ready.completed_at) + DAY);
    expect(ready.download_url).toBe(`http://notestream.test/api/v1/export/${queued.id}/download`);

    // One mail, to the account's address, with that link.
    expect(sent).toHaveLength(1);
    expect(sent[0]!.to).toBe(a.email);
    expect(sent[0]!.subject).toContain("export");
    expect(sent[0]!.text).toContain(ready.download_url);
    expect(sent[0]!.text).toContain(ready.expires_at);

    const { res: dl, zip } = await download(read, ready);
    expect(dl.status).toBe(200);
    expect(dl.headers.get("content-type")).toBe("application/zip");
    expect(dl.headers.get("content-disposition")).toContain("attachment");
    expect(zip.length).toBe(ready.size_bytes);
    const { files, manifest } = unzip(zip);
    expect(manifest.notes).toEqual([]);
    expect(manifest.workspace.id).toBe(a.workspaceId);
    expect(Object.keys(files)).toEqual(["manifest.json"]);
  });

  test("the zip holds every live note byte for byte, in folder paths, with a matching manifest; trashed notes stay out", async () => {
    const a = await h.account("dev");
    const token = await h.token(a, ["read", "write"]);
    const create = async (note: Record<string, unknown>) => {
      const r = await h.request("POST", "/api/v1/notes", { token, body: { note } });
      expect(r.status).toBe(201);
      return (await r.json()) as { id: string; title: string };
    };

    // A stream of several appends with unicode.
    const lines = ["deploy é 1", "日本語のログ", "emoji 🎉🚀 done", "tab\there", "Ünïcödé ✓ 👩‍👩‍👧"];
    let streamId = "";
    for (const text of lines) {
      const r = await h.request("POST", "/api/v1/notes/by-filename/deploys.log/append", { token, body: { text } });
      expect(r.status).toBeLessThan(300);
      streamId = (await r.json()).id;
    }
    const streamBody = lines.map((l) => `${l}\n`).join("");

    const folderRes = await h.request("POST", "/api/v1/folders", { token, body: { folder: { name: "Runbooks" } } });
    expect(folderRes.status).toBe(201);
    const folder = (await folderRes.json()) as { id: string };

    const restartBody = "1. ssh in\n2. systemctl restart app ✓\n\tindented 日本\n";
    const restart = await create({ title: "Restart", plain_body: restartBody, folder_id: folder.id });
    // Control characters are stripped on save; the slash and the format character stay in the title.
    const slashed = await create({ title: "Q3/Q4\u0007 report\u200B", plain_body: "numbers: 1/2" });
    expect(slashed.title).toContain("/");
    const same1 = await create({ title: "Same", plain_body: "first of two" });
    const same2 = await create({ title: "Same", plain_body: "second of two 🙂" });
    const empty = await create({ title: "Empty", plain_body: "" });
    const trashed = await create({ title: "Gone", plain_body: "trashed-secret" });
    await h.deps.db.update(notes).set({ trashedAt: h.clock.now() }).where(eq(notes.id, trashed.id));

    // Another account's notes are not in this export.
    const other = await h.account("dev");
    const otherToken = await h.token(other, ["read", "write"]);
    expect((await h.request("POST", "/api/v1/notes", { token: otherToken, body: { note: { title: "Other", plain_body: "other-secret" } } })).status).toBe(201);

    const ready = await readyExport(token);
    expect(ready.notes).toBe(6);
    const { res, zip } = await download(token, ready);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/zip");
    expect(zip.length).toBe(ready.size_bytes);

    const { files, manifest } = unzip(zip);
    expect(manifest.notes).toHaveLength(6);
    expectManifestMatches(files, manifest);

    const entry = (id: string) => {
      const e = manifest.notes.find((n) => n.id === id);
      expect(e, id).toBeDefined();
      return e!;
    };
    const content = (id: string) => files[entry(id).path]!;
    const expectContent = (id: string, text: string) => expect(Buffer.from(content(id)).equals(Buffer.from(utf8(text))), id).toBe(true);

    // Byte for byte.
    expectContent(streamId, streamBody);
    expectContent(restart.id, restartBody);
    expectContent(slashed.id, "numbers: 1/2");
    expectContent(same1.id, "first of two");
    expectContent(same2.id, "second of two 🙂");
    expectContent(empty.id, "");
    expect(entry(empty.id)).toMatchObject({ byte_size: 0, sha256: sha256(new Uint8Array(0)) });

    // Paths mirror folders: the folder's note under it, unfiled notes at the top.
    expect(entry(restart.id).path).toBe("Runbooks/Restart.txt");
    expect(entry(restart.id).folder_id).toBe(folder.id);
    // (New accounts come with default folders too; each is listed with its path.)
    expect(manifest.folders).toContainEqual({ id: folder.id, name: "Runbooks", path: "Runbooks" });
    for (const id of [streamId, slashed.id, same1.id, same2.id, empty.id]) {
      expect(entry(id).path, id).not.toContain("/");
      expect(entry(id).path, id).toEndWith(".txt");
    }
    expect(entry(streamId).path).toStartWith("deploys.log");
    expect(entry(empty.id).path).toBe("Empty.txt");
    // A slash in a title does not make a folder; control and format characters do not reach the name.
    const slashedPath = entry(slashed.id).path;
    expect(slashedPath).toMatch(/^Q3.Q4 report\.txt$/);
    expect(slashedPath).not.toMatch(/[\p{Cc}\p{Cf}]/u);
    // Same titles get distinct paths.
    expect(entry(same1.id).path).not.toBe(entry(same2.id).path);
    expect(entry(same1.id).path).toMatch(/^Same.*\.txt$/);
    expect(entry(same2.id).path).toMatch(/^Same.*\.txt$/);
    expect(entry(streamId)).toMatchObject({ kind: "stream", filename: "deploys.log" });

    // Neither the trashed note nor the other account's note.
    expect(manifest.notes.map((n) => n.id)).not.toContain(trashed.id);
    const everything = Object.values(files)
      .map((f) => new TextDecoder().decode(f))
      .join("\n");
    expect(everything).not.toContain("trashed-secret");
    expect(everything).not.toContain("other-secret");
  });

  test("the mailed link also lands in the outbox as an .eml with the default mailer", async () => {
    // A fresh harness with its own OutboxMailer (the default).
    await h.close();
    h = await harness();
    const a = await h.account("dev");
    const token = await h.token(a, ["read"]);
    const ready = await readyExport(token);
    const outbox = join(h.dataDir, "outbox");
    expect(existsSync(outbox)).toBe(true);
    const emls = readdirSync(outbox).filter((f) => f.endsWith(".eml"));
    expect(emls).toHaveLength(1);
    const eml = await Bun.file(join(outbox, emls[0]!)).text();
    expect(eml).toContain(`To: ${a.email}`);
    // The body may be quoted-printable; undo soft line breaks and =3D before looking for the link.
    const body = eml.replace(/=\r?\n/g, "").replace(/=3D/g, "=");
    expect(body).toContain(ready.download_url);
  });
});

describe("export: who may see it, and for how long", () => {
  test("another account's token gets the same 404 as a missing id; a pinned token gets 403", async () => {
    const a = await h.account("dev");
    const token = await h.token(a, ["read", "write"]);
    const ready = await readyExport(token);

    const stranger = await h.token(await h.account("dev"), ["read", "write"]);
    const missingStatus = await exportStatus(token, "exp_doesnotexist0000");
    expect(missingStatus.status).toBe(404);
    const missing = await errorOf(missingStatus);
    const missingDl = await h.request("GET", "/api/v1/export/exp_doesnotexist0000/download", { token });
    expect(missingDl.status).toBe(404);
    const missingDlError = await errorOf(missingDl);

    const foreignStatus = await exportStatus(stranger, ready.id);
    expect(foreignStatus.status).toBe(404);
    expect(await errorOf(foreignStatus)).toEqual(missing);
    const foreignDl = await h.request("GET", pathOf(ready.download_url), { token: stranger });
    expect(foreignDl.status).toBe(404);
    expect(await errorOf(foreignDl)).toEqual(missingDlError);

    // A token pinned to one note cannot request, see or download account exports.
    const { id: noteId } = await (await h.request("POST", "/api/v1/notes/by-filename/pin.log/append", { token, body: { text: "x" } })).json();
    const pinned = await h.token(a, ["read", "write"], { noteId });
    for (const res of [
      await requestExport(pinned),
      await exportStatus(pinned, ready.id),
      await h.request("GET", pathOf(ready.download_url), { token: pinned }),
    ]) {
      expect(res.status).toBe(403);
      expect((await errorOf(res)).code).toBe("insufficient_scope");
    }

    // No token at all.
    expect((await h.request("GET", pathOf(ready.download_url))).status).toBe(401);
  });

  test("after 24 hours the link is dead (404); the expiry task deletes the file and the status says expired", async () => {
    const a = await h.account("dev");
    const token = await h.token(a, ["read"]);
    const ready = await readyExport(token);
    expect(await exportZipKept(h, ready.id)).toBe(true);

    // Just before the deadline it still works.
    const expiresAt = Date.parse(ready.expires_at);
    h.clock.advance(expiresAt - 1 - h.clock.now());
    expect((await download(token, ready)).res.status).toBe(200);

    h.clock.advance(2);
    const late = await h.request("GET", pathOf(ready.download_url), { token });
    expect(late.status).toBe(404);
    expect((await errorOf(late)).code).toBe("not_found");
    const afterDeadline = await (await exportStatus(token, ready.id)).json();
    expect(afterDeadline).toMatchObject({ status: "expired", download_url: null });

    await runAllTasks(h.deps);
    expect(await exportZipKept(h, ready.id)).toBe(false);
    expect(await exportZipsKept(h)).toEqual([]);
    const record = await (await exportStatus(token, ready.id)).json();
    expect(record).toMatchObject({ id: ready.id, status: "expired", download_url: null });
    const rows = await h.deps.db.select({ status: exportsTable.status, file_path: exportsTable.filePath }).from(exportsTable).where(eq(exportsTable.id, ready.id));
    expect(rows).toEqual([{ status: "expired", file_path: null }]);
    expect((await h.request("GET", pathOf(ready.download_url), { token })).status).toBe(404);
  });

  test("two exports an hour per account: the third is 429 with Retry-After; an hour after the first it works again", async () => {
    const a = await h.account("dev");
    const token = await h.token(a, ["read"]);
    expect((await requestExport(token)).status).toBe(202);
    h.clock.advance(10 * 60 * 1000);
    expect((await requestExport(token)).status).toBe(202);
    h.clock.advance(10 * 60 * 1000);

    const third = await requestExport(token);
    expect(third.status).toBe(429);
    const retryAfter = Number(third.headers.get("retry-after"));
    // The first export leaves the window 40 minutes from now.
    expect(retryAfter).toBe(40 * 60);
    expect((await errorOf(third)).code).toBe("rate_limited");

    // Another token of the same account shares the allowance.
    const second = await h.token(a, ["read", "write"]);
    expect((await requestExport(second)).status).toBe(429);

    h.clock.advance(retryAfter * 1000 - 1000);
    expect((await requestExport(token)).status).toBe(429);
    h.clock.advance(1000);
    const again = await requestExport(token);
    expect(again.status).toBe(202);
    // Now the second and this one are in the window.
    expect((await requestExport(token)).status).toBe(429);

    // Another account has its own allowance.
    expect((await requestExport(await h.token(await h.account("dev"), ["read"]))).status).toBe(202);
    await h.jobs.drain();
  });

  test("a lapsed, read-only account can still export", async () => {
    const a = await h.account("dev");
    const token = await h.token(a, ["read", "write"]);
    expect((await h.request("POST", "/api/v1/notes/by-filename/kept.log/append", { token, body: { text: "before the lapse" } })).status).toBe(201);
    await h.deps.writer.write(() => lapse(h.deps, a.workspaceId));

    const refused = await h.request("POST", "/api/v1/notes/by-filename/kept.log/append", { token, body: { text: "after" } });
    expect(refused.status).toBe(403);
    expect((await errorOf(refused)).code).toBe("account_read_only");

    const ready = await readyExport(token);
    expect(ready.notes).toBe(1);
    const { res, zip } = await download(token, ready);
    expect(res.status).toBe(200);
    const { files, manifest } = unzip(zip);
    expectManifestMatches(files, manifest);
    expect(new TextDecoder().decode(files["kept.log.txt"] ?? files[manifest.notes[0]!.path])).toBe("before the lapse\n");
    expect(sent.map((m) => m.to)).toEqual([a.email]);
  });
});

describe("export: large accounts", () => {
  test("a ~20 MB stream exports completely and byte-exact", async () => {
    await h.close();
    await setup({ profile: "unlimited" });
    const a = await h.account("dev");
    const token = await h.token(a, ["read", "write"]);

    const CHUNKS = 20;
    const hash = createHash("sha256");
    let total = 0;
    for (let i = 0; i < CHUNKS; i++) {
      // ~1 MB of incompressible text with some multi-byte characters; the server adds the LF.
      const text = `${i} é日本🙂 ${randomBytes(786_000).toString("base64")}`;
      const r = await h.request("POST", "/api/v1/notes/by-filename/big.log/append", { token, body: { text } });
      expect(r.status).toBeLessThan(300);
      const stored = utf8(`${text}\n`);
      hash.update(stored);
      total += stored.length;
    }
    expect(total).toBeGreaterThan(20_000_000);
    const expectedSha = hash.digest("hex");

    const ready = await readyExport(token);
    expect(ready.notes).toBe(1);
    // Random base64 does not compress much: the zip is most of the data.
    expect(ready.size_bytes).toBeGreaterThan(total * 0.7);

    const { res, zip } = await download(token, ready);
    expect(res.status).toBe(200);
    expect(zip.length).toBe(ready.size_bytes);
    const { files, manifest } = unzip(zip);
    expectManifestMatches(files, manifest);
    expect(manifest.notes).toHaveLength(1);
    expect(manifest.notes[0]).toMatchObject({ path: "big.log.txt", byte_size: total, sha256: expectedSha });
    expect(files["big.log.txt"]!.length).toBe(total);
    expect(sha256(files["big.log.txt"]!)).toBe(expectedSha);
  }, 60_000);
});

describe("export: rich-text notes", () => {
  test("come as .txt (their plain text), .docx and .pdf", async () => {
    const a = await h.account("dev");
    const token = await h.token(a, ["read", "write"]);
    const { createRichNote } = await import("../../src/modules/notes/rich");
    const { webPrincipal } = await import("../../src/web/session");
    await createRichNote({ ctx: { deps: h.deps, principal: webPrincipal(a.accountId, a.workspaceId, Infinity) }, title: "Plan", html: "<p>Ship <b>it</b></p>" });
    const { id } = await (await requestExport(token)).json();
    await h.jobs.drain();
    const status = await (await exportStatus(token, id)).json();
    const zip = unzipSync(new Uint8Array(await (await h.request("GET", pathOf(status.download_url), { token })).arrayBuffer()));
    expect(new TextDecoder().decode(zip["Plan.txt"]!)).toBe("Ship it\n");
    expect(zip["Plan.docx"]!.slice(0, 2)).toEqual(new Uint8Array([0x50, 0x4b]));
    expect(new TextDecoder().decode(zip["Plan.pdf"]!.slice(0, 5))).toBe("%PDF-");
    const manifest = JSON.parse(new TextDecoder().decode(zip["manifest.json"]!));
    expect(manifest.notes[0].renderings).toEqual(["Plan.docx", "Plan.pdf"]);
  });
});

describe("export: where the zip lives", () => {
  /** A stream of about `mb` MB of incompressible text: its zip spans several parts. */
  async function bigStream(token: string, mb: number): Promise<void> {
    for (let i = 0; i < mb; i++) {
      const r = await h.request("POST", "/api/v1/notes/by-filename/big.log/append", { token, body: { text: randomBytes(786_000).toString("base64") } });
      expect(r.status).toBeLessThan(300);
    }
  }

  test.skipIf(!onPostgres)("on PostgreSQL the zip is in the database, in 1 MB parts: another instance serves it with no file on disk", async () => {
    await h.close();
    await setup({ profile: "unlimited" });
    const a = await h.account("dev");
    const token = await h.token(a, ["read", "write"]);
    await bigStream(token, 3);
    const ready = await readyExport(token);

    // Nothing on disk; the parts are 1 MiB each but the last, and add up to the zip.
    expect(existsSync(join(h.dataDir, "exports"))).toBe(false);
    const [row] = await h.deps.db.select({ filePath: exportsTable.filePath }).from(exportsTable).where(eq(exportsTable.id, ready.id));
    expect(row!.filePath).toBeNull();
    const parts = await h.deps.db.select({ part: exportFiles.part, data: exportFiles.data }).from(exportFiles).where(eq(exportFiles.exportId, ready.id)).orderBy(exportFiles.part);
    expect(parts.length).toBeGreaterThanOrEqual(3);
    expect(parts.map((p) => p.part)).toEqual(parts.map((_, i) => i));
    for (const p of parts.slice(0, -1)) expect(p.data.length).toBe(1 << 20);
    expect(parts.at(-1)!.data.length).toBeGreaterThan(0);
    expect(parts.at(-1)!.data.length).toBeLessThanOrEqual(1 << 20);
    expect(parts.reduce((n, p) => n + p.data.length, 0)).toBe(ready.size_bytes);
    const stored = Buffer.concat(parts.map((p) => p.data));

    // A second instance on the same database serves the download, with no file anywhere.
    rmSync(join(h.dataDir, "exports"), { recursive: true, force: true });
    const other = await harness({ profile: "unlimited", dataDir: h.dataDir, clock: h.clock });
    try {
      const res = await other.request("GET", pathOf(ready.download_url), { token });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/zip");
      expect(res.headers.get("content-length")).toBe(String(ready.size_bytes));
      const zip = new Uint8Array(await res.arrayBuffer());
      expect(Buffer.from(zip).equals(stored)).toBe(true);
      const { files, manifest } = unzip(zip);
      expectManifestMatches(files, manifest);
      expect(existsSync(join(other.dataDir, "exports"))).toBe(false);
    } finally {
      await other.stop();
    }

    // The expiry sweep deletes the parts.
    h.clock.advance(DAY);
    await runAllTasks(h.deps);
    expect(await exportZipsKept(h)).toEqual([]);
  }, 60_000);

  test.skipIf(onPostgres)("on SQLite the zip is a file under the data dir; nothing goes to export_files", async () => {
    const a = await h.account("dev");
    const token = await h.token(a, ["read", "write"]);
    expect((await h.request("POST", "/api/v1/notes/by-filename/s.log/append", { token, body: { text: "x" } })).status).toBe(201);
    const ready = await readyExport(token);
    const [row] = await h.deps.db.select({ filePath: exportsTable.filePath }).from(exportsTable).where(eq(exportsTable.id, ready.id));
    expect(row!.filePath).toBe(join(h.dataDir, "exports", `${ready.id}.zip`));
    expect(readdirSync(join(h.dataDir, "exports"))).toEqual([`${ready.id}.zip`]);
    expect(await h.deps.db.select().from(exportFiles)).toEqual([]);
  });
});
