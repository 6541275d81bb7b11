/**
 * The compiled executable renders PDFs in any script: the fonts are embedded in it by
 * `bun build --compile` (it runs from an empty directory, with no node_modules to read them from).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { extractText, getDocumentProxy } from "unpdf";
import { loadConfig } from "../../src/config";
import { createAccount } from "../../src/modules/accounts/service";
import { createRichNote } from "../../src/modules/notes/rich";
import { openDeps } from "../../src/runtime";
import { createSession, SESSION_COOKIE, webPrincipal } from "../../src/web/session";
import { BUILD_TIMEOUT_MS, buildBinary, cleanup, databaseUrlFor, FETCH_TIMEOUT_MS, startServer, tempDir, withTimeout } from "../helpers/binary";

beforeAll(() => {
  buildBinary();
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  await cleanup();
});

const TITLE = "Отчёт · Αναφορά · 報告";
const LINES = ["Crème brûlée à Łódź.", "Съешь же ещё этих мягких булок.", "Ξεσκεπάζω την ψυχοφθόρα.", "日本語と中文の文章。", "한국어 문장.", "שלום עולם"];

/** A data dir with a rich note and a browser session, made by the source; the binary serves it. */
async function prepare(dataDir: string): Promise<{ id: string; cookie: string }> {
  // On the PostgreSQL run, the data dir's database, the one the binary is handed.
  const url = databaseUrlFor(dataDir);
  const deps = await openDeps(loadConfig({ ...(url ? { NOTESTREAM_DATABASE_URL: url } : {}), NOTESTREAM_DATA_DIR: dataDir, NOTESTREAM_LOG_REQUESTS: "false" }));
  try {
    const made = await deps.writer.write(() => createAccount(deps, { email: "pdf@example.com", plan: "dev" }));
    const principal = webPrincipal(made.account.id, made.workspaceId, Infinity);
    const note = await createRichNote({ ctx: { deps, principal }, title: TITLE, html: LINES.map((l) => `<p>${l}</p>`).join("") });
    const { secret } = await createSession(deps, made.account);
    await deps.writer.idle();
    return { id: (note.body as { id: string }).id, cookie: `${SESSION_COOKIE}=${secret}` };
  } finally {
    await deps.close();
  }
}

test(
  "the executable's PDF download has the note's Cyrillic, Greek, CJK and Hebrew text",
  async () => {
    const dataDir = tempDir("pdf");
    const { id, cookie } = await prepare(dataDir);
    const server = await startServer(dataDir);
    try {
      const res = await withTimeout(fetch(`${server.base}/notes/${id}/download/pdf`, { headers: { cookie } }), FETCH_TIMEOUT_MS, "the PDF");
      expect(res.status).toBe(200);
      const bytes = new Uint8Array(await res.arrayBuffer());
      const { text } = await extractText(await getDocumentProxy(bytes), { mergePages: true });
      expect(text.replace(/\s+/g, "")).toBe((TITLE + LINES.join("")).replace(/\s+/g, ""));
    } finally {
      await server.stop();
    }
  },
  30_000,
);
