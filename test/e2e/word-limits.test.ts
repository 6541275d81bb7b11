/**
 * Words at PostgreSQL's limit on the compiled binary: a word of 2,044 to 2,050 bytes (PostgreSQL
 * indexes 2,046 at most and refuses a longer one in a tsvector literal), of ASCII and of two-byte
 * Latin letters, appended alone and beside 40 appends sent at the same moment. Every append is
 * acknowledged and stored, the others of its batch too, and the line is found by its other words.
 * Runs on SQLite and on PostgreSQL (make test's two passes).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BUILD_TIMEOUT_MS, append, buildBinary, cleanup, provision, request, startServer, tempDir, type RunningServer } from "../helpers/binary";

beforeAll(() => void buildBinary(), BUILD_TIMEOUT_MS);
afterAll(() => cleanup());

const BYTES = [2044, 2045, 2046, 2047, 2048, 2049, 2050];

/** A word of `bytes` bytes in UTF-8: hex digits from a letter on (one word to every parser), or é (two bytes) and an `a` for an odd count. */
function word(kind: "ascii" | "latin", bytes: number): string {
  if (kind === "ascii") return "deadbeef0123456789".repeat(Math.ceil(bytes / 18)).slice(0, bytes);
  return "é".repeat(bytes >> 1) + (bytes % 2 ? "a" : "");
}

const CASES = (["ascii", "latin"] as const).flatMap((kind) => BYTES.map((bytes) => ({ kind, bytes, word: word(kind, bytes) })));

describe("words at PostgreSQL's limit of 2,046 bytes", () => {
  let server: RunningServer;
  let token: string;
  beforeAll(async () => {
    const dataDir = tempDir("word-limits");
    token = provision(dataDir).token;
    // Unlimited: several hundred appends in a few seconds are past Dev's rate limit.
    server = await startServer(dataDir, { NOTESTREAM_LIMIT_PROFILE: "unlimited" });
  }, 30_000);
  afterAll(async () => {
    await server?.stop("SIGKILL").catch(() => {});
  });

  /** The stream's lines as stored, oldest first. */
  async function lines(filename: string): Promise<string[]> {
    const r = await request(server.base, "GET", `/api/v1/notes/by-filename/${encodeURIComponent(filename)}/lines?last=100`, { token });
    expect(r.status).toBe(200);
    return (r.body.lines as { text: string }[]).map((l) => l.text);
  }

  /** The ids of the notes a search for `q` finds, once it finds `id` or after 2 s (search may trail an append by that much). */
  async function found(q: string, id: string): Promise<string[]> {
    const until = Date.now() + 2_000;
    for (;;) {
      const r = await request(server.base, "GET", `/api/v1/search?q=${encodeURIComponent(q)}`, { token });
      expect(r.status).toBe(200);
      const ids = (r.body as { id: string }[]).map((n) => n.id);
      if (ids.includes(id) || Date.now() > until) return ids;
      await Bun.sleep(100);
    }
  }

  test("each appended alone: 2xx, stored as sent, found by the line's other words", async () => {
    const problems: unknown[] = [];
    // Searched once all are appended: one index pass, rather than one wait per case.
    const searches: { kind: string; bytes: number; q: string; id: string }[] = [];
    for (const { kind, bytes, word } of CASES) {
      const filename = `alone-${kind}-${bytes}.log`;
      const text = `blob ${word} end alone${kind}${bytes}`;
      const r = await append(server.base, token, filename, text);
      if (r.status !== 201) {
        problems.push({ kind, bytes, status: r.status, body: r.body });
        continue;
      }
      const stored = await lines(filename);
      if (stored.length !== 1 || stored[0] !== text) problems.push({ kind, bytes, stored: stored.map((l) => l.length) });
      searches.push({ kind, bytes, q: `alone${kind}${bytes}`, id: r.body.id });
    }
    for (const { kind, bytes, q, id } of searches) {
      const ids = await found(q, id);
      if (!ids.includes(id)) problems.push({ kind, bytes, search: ids });
    }
    expect(problems).toEqual([]);
  }, 30_000);

  test("each beside 40 appends sent at the same moment: every one 2xx and stored, the word's line found", async () => {
    const problems: unknown[] = [];
    const searches: { kind: string; bytes: number; q: string; id: string }[] = [];
    for (const { kind, bytes, word } of CASES) {
      // Half of the others go to the word's own stream (one chunk with it), half to another stream.
      const own = `crowd-${kind}-${bytes}.log`;
      const other = `crowd-${kind}-${bytes}-others.log`;
      const sends = Array.from({ length: 40 }, (_, i) => ({ filename: i % 2 ? own : other, text: `neighbour ${i} of ${kind} ${bytes}` }));
      sends.splice(20, 0, { filename: own, text: `blob ${word} end crowd${kind}${bytes}` });
      const answers = await Promise.all(sends.map((s) => append(server.base, token, s.filename, s.text)));
      const refused = answers.map((a, i) => ({ status: a.status, text: sends[i]!.text.slice(0, 30), code: a.body?.error?.code })).filter((a) => a.status >= 300);
      if (refused.length > 0) {
        problems.push({ kind, bytes, refused: refused.length, first: refused[0] });
        continue;
      }
      for (const filename of [own, other]) {
        const stored = (await lines(filename)).sort();
        const sent = sends.filter((s) => s.filename === filename).map((s) => s.text).sort();
        if (JSON.stringify(stored) !== JSON.stringify(sent)) problems.push({ kind, bytes, filename, stored: stored.length, sent: sent.length });
      }
      searches.push({ kind, bytes, q: `crowd${kind}${bytes}`, id: answers[20]!.body.id as string });
    }
    for (const { kind, bytes, q, id } of searches) {
      const ids = await found(q, id);
      if (!ids.includes(id)) problems.push({ kind, bytes, search: ids });
    }
    expect(problems).toEqual([]);
  }, 60_000);
});
