/**
 * `make bench`'s growth rows (`BENCH_ONLY=growth` runs them alone): the same reads and writes on
 * one account of 2,000 streams and on another of 20,000, each stream 100 log lines in 10 chunks
 * (as a stream appended ten lines at a time stores them): 220,000 lines and 2.2 million. Each
 * request is timed alone (one connection, after a warm-up), and a row gives the median at both
 * sizes and their ratio; the target is 1.5 or less (issue 33).
 *
 * The streams go straight into the SQLite file of the stopped server (made by the binary's own
 * `account create`, so migrated by it), through the same tables and triggers as appends: the
 * search index and the kept counts fill as they would. Through the API it would take 2.2 million
 * appends.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { provision, startServer, stop, tmp } from "./lib";

/** In every line: a common word's search matches all of them. */
export const COMMON_WORD = "request";
/** In five lines of the first streams, whatever the size: a rare word's matches stay the same. */
export const RARE_WORD = "zanzibar";
const SIZES = [2_000, 20_000] as const;
const LINES = 100;
/** BENCH_GROWTH_CHUNK_LINES=1: a chunk per line, as a stream appended one line at a time stores them (2.2 million index rows). */
const LINES_PER_CHUNK = Number(process.env.BENCH_GROWTH_CHUNK_LINES ?? 10);
const CHUNKS = LINES / LINES_PER_CHUNK;
const RUNS = Number(process.env.BENCH_GROWTH_RUNS ?? 60);
const WARM_UP = 10;

function chunkText(stream: number, chunk: number): string {
  let text = "";
  for (let k = 0; k < LINES_PER_CHUNK; k++) {
    const n = chunk * LINES_PER_CHUNK + k;
    const rare = stream <= 5 && n === 50 ? ` ${RARE_WORD}` : "";
    text += `2026-11-27T10:${String(n % 60).padStart(2, "0")}:00Z INFO host-${stream % 50} GET /api/v1/items/${stream * 100 + n} ${COMMON_WORD} ok in ${n % 97} ms${rare}\n`;
  }
  return text;
}

/** Streams s{from}.log to s{to - 1}.log, their chunks, and the bytes they add to the note and the workspace. */
function addStreams(dataDir: string, from: number, to: number): void {
  const db = new Database(join(dataDir, "notestream.db"));
  const { ws } = db
    .query<{ ws: string }, []>("SELECT w.id AS ws FROM workspaces w JOIN accounts a ON a.id = w.owner_id WHERE a.email = 'bench@example.com' AND w.kind = 'personal'")
    .get()!;
  const start = Date.now() - 86_400_000;
  const note = db.query("INSERT INTO notes (id, workspace_id, kind, format, filename, title, byte_size, created_at, updated_at, last_write_at) VALUES (?1, ?2, 'stream', 'plain', ?3, ?3, ?4, ?5, ?5, ?5)");
  const chunk = db.query("INSERT INTO note_chunks (note_id, text, at) VALUES (?, ?, ?)");
  let added = 0;
  db.transaction(() => {
    for (let i = from; i < to; i++) {
      const texts = Array.from({ length: CHUNKS }, (_, c) => chunkText(i, c));
      const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
      const id = `note_growth${String(i).padStart(15, "0")}`;
      // A second apart, so the newest first of the notes list is an order, not a tie.
      const at = start + i * 1000;
      note.run(id, ws, `s${i}.log`, bytes, at);
      for (const t of texts) chunk.run(id, t, at);
      added += bytes;
    }
    db.query("UPDATE workspaces SET storage_used = storage_used + ? WHERE id = ?").run(added, ws);
    // Indexed as the server's indexer would have (src/modules/search/indexer.ts), so the rows
    // measure a server in its steady state, not one catching up on 200,000 chunks.
    db.run(
      `INSERT INTO search_chunks (rowid, text, ws)
         SELECT c.seq, c.text, hex(n.workspace_id) FROM note_chunks c JOIN notes n ON n.id = c.note_id
         WHERE c.seq > (SELECT through FROM search_chunks_indexed)`,
    );
    db.run("UPDATE search_chunks_indexed SET through = (SELECT max(seq) FROM note_chunks)");
  })();
  db.close();
}

interface Probe {
  label: string;
  request: (base: string, token: string) => Promise<Response>;
}

const get = (path: string) => (base: string, token: string) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });

const PROBES: Probe[] = [
  {
    label: "an append to a stream",
    request: (base, token) =>
      fetch(`${base}/api/v1/notes/by-filename/s1.log/append`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "2026-11-27T11:00:00Z INFO one more line" }),
      }),
  },
  { label: "a tail (last 20 lines)", request: get("/api/v1/notes/by-filename/s1.log/lines?last=20") },
  { label: "GET /notes, first page", request: get("/api/v1/notes") },
  { label: "GET /account", request: get("/api/v1/account") },
  { label: `search, a common word (${COMMON_WORD}: every line)`, request: get(`/api/v1/search?q=${COMMON_WORD}`) },
  { label: `search, a rare word (${RARE_WORD}: 5 lines)`, request: get(`/api/v1/search?q=${RARE_WORD}`) },
];

interface Account {
  base: string;
  token: string;
  proc: Awaited<ReturnType<typeof startServer>>["proc"];
}

/** One request's time in ms, and its X-Total-Count. */
async function timed(probe: Probe, at: Account): Promise<{ ms: number; total: string }> {
  const t0 = performance.now();
  const res = await probe.request(at.base, at.token);
  await res.arrayBuffer();
  const ms = performance.now() - t0;
  if (!res.ok) throw new Error(`${probe.label}: ${res.status}`);
  return { ms, total: res.headers.get("x-total-count") ?? "" };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

/**
 * The growth rows: both accounts served at once, each probe's requests alternating between them
 * (the order too), so that the VM's drift falls on both alike; the ratio is the median of the
 * pairs'.
 */
export async function growthRows(bin: string, row: (...cells: string[]) => void): Promise<void> {
  const builds: number[] = [];
  const accounts: Account[] = [];
  for (const size of SIZES) {
    const dir = join(tmp, `data-growth-${size}`);
    const token = provision(bin, dir, "dev");
    const t0 = performance.now();
    addStreams(dir, 1, size + 1);
    builds.push(performance.now() - t0);
    const { base, proc } = await startServer(bin, dir, {});
    accounts.push({ base, token, proc });
  }
  const [small, large] = accounts as [Account, Account];
  const f2 = (n: number) => n.toFixed(2);
  try {
    for (const probe of PROBES) {
      const times = { small: [] as number[], large: [] as number[] };
      const totals = { small: "", large: "" };
      for (let i = 0; i < WARM_UP + RUNS; i++) {
        for (const side of i % 2 ? (["large", "small"] as const) : (["small", "large"] as const)) {
          const { ms, total } = await timed(probe, side === "small" ? small : large);
          if (i >= WARM_UP) times[side].push(ms);
          totals[side] = total;
        }
      }
      const ratio = median(times.large.map((t, i) => t / times.small[i]!));
      row(
        `growth: ${probe.label}, 2,000 → 20,000 streams`,
        `p50 ${f2(median(times.small))} → ${f2(median(times.large))} ms`,
        `${RUNS} alternating pairs, one connection${totals.small ? `; X-Total-Count ${totals.small} → ${totals.large}` : ""}`,
        `${f2(ratio)}x${ratio > 1.5 ? " (over 1.5)" : ""}`,
      );
    }
  } finally {
    for (const a of accounts) await stop(a.proc);
  }
  row(
    "growth: building the streams (SQLite, straight into the file)",
    `${(builds[0]! / 1000).toFixed(1)} s and ${(builds[1]! / 1000).toFixed(1)} s`,
    `${SIZES.map((n) => n.toLocaleString("en-US")).join(" and ")} streams of ${CHUNKS} chunks of ${LINES_PER_CHUNK} lines`,
    "",
  );
}
