/**
 * The measurement behind the search index's tokenizer (docs/performance-log.md, the search index):
 * the same generated log lines into a chunk table like note_chunks, with no index and with an
 * external-content FTS5 index under each candidate tokenizer; the database's size and the time
 * added, and a few queries that show what each one finds.
 *
 *   bun bench/search-tokenizers.ts            # LINES=200000
 */
import { Database } from "bun:sqlite";
import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { tmp } from "./lib";

const LINES = Number(process.env.LINES ?? 200_000);
const PER_CHUNK = 5;
const CHUNKS_PER_COMMIT = 10;
const WORDS = (
  "deploy ok failed error warning started finished user request timeout connection refused payment received invoice " +
  "order shipped disk full backup completed retry job cron nightly build test passed service restarted memory usage high " +
  "latency database query slow cache miss hit"
).split(" ");
const OTHER_SCRIPTS = ["日本語のテキストを検索する、東京の天気は晴れです。", "Привет мир, ошибка соединения.", "Καλημέρα κόσμε"];

// A fixed sequence, so that every tokenizer indexes the same text.
let seed = 1;
const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const pick = <T>(a: T[]) => a[Math.floor(rnd() * a.length)]!;
function line(i: number): string {
  const words = Array.from({ length: 8 }, () => pick(WORDS)).join(" ");
  const other = rnd() < 0.05 ? ` ${pick(OTHER_SCRIPTS)}` : "";
  return `${new Date(1.7e12 + i * 1000).toISOString()} ${pick(["INFO", "WARN", "ERROR"])} host-${Math.floor(rnd() * 20)} ${words} id=${Math.floor(rnd() * 0xffffffff).toString(16)} took ${Math.floor(rnd() * 900)}ms${other}\n`;
}

const CANDIDATES: [string, string | null][] = [
  ["none", null],
  ["unicode61 remove_diacritics 2", "tokenize = 'unicode61 remove_diacritics 2'"],
  ["unicode61 remove_diacritics 2, prefix='3'", "tokenize = 'unicode61 remove_diacritics 2', prefix = '3'"],
  ["trigram remove_diacritics 1", "tokenize = 'trigram remove_diacritics 1'"],
];
const QUERIES = ['"timeout"', '"東京"', '"東京の天気"', '"ошибка"', '"4f2"', '"host"*'];

// Generated once: only the inserts are timed.
const chunks: string[] = [];
for (let n = 0; n < LINES; ) {
  let text = "";
  for (let j = 0; j < PER_CHUNK && n < LINES; j++) text += line(n++);
  chunks.push(text);
}
const textBytes = chunks.reduce((sum, c) => sum + Buffer.byteLength(c), 0);

let baseline = { bytes: 0, ms: 0 };
for (const [name, options] of CANDIDATES) {
  const path = join(tmp, `tokenizer-${CANDIDATES.findIndex((c) => c[0] === name)}.db`);
  const db = new Database(path, { create: true });
  db.run("PRAGMA journal_mode = WAL");
  // The indexing's own CPU, not the disk's fsync time (which would drown it).
  db.run("PRAGMA synchronous = OFF");
  db.run("CREATE TABLE note_chunks (seq INTEGER PRIMARY KEY, note_id TEXT NOT NULL, text TEXT NOT NULL)");
  if (options) {
    db.run(`CREATE VIRTUAL TABLE idx USING fts5(text, content = 'note_chunks', content_rowid = 'seq', ${options})`);
    db.run("CREATE TRIGGER idx_insert AFTER INSERT ON note_chunks BEGIN INSERT INTO idx (rowid, text) VALUES (new.seq, new.text); END");
  }
  const insert = db.query("INSERT INTO note_chunks (note_id, text) VALUES (?, ?)");
  const t0 = performance.now();
  for (let i = 0; i < chunks.length; i += CHUNKS_PER_COMMIT) {
    db.run("BEGIN");
    for (let c = i; c < Math.min(i + CHUNKS_PER_COMMIT, chunks.length); c++) insert.run(`note_${c % CHUNKS_PER_COMMIT}`, chunks[c]!);
    db.run("COMMIT");
  }
  const ms = performance.now() - t0;
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  const bytes = statSync(path).size;
  if (!options) baseline = { bytes, ms };
  const found = options
    ? QUERIES.map((q) => {
        try {
          return `${q} ${db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM idx WHERE idx MATCH ?").get(q)!.n}`;
        } catch (e) {
          return `${q} ${(e as Error).message}`;
        }
      }).join(", ")
    : "";
  const index = bytes - baseline.bytes;
  console.log(
    `${name}: text ${(textBytes / 1e6).toFixed(1)} MB, database ${(bytes / 1e6).toFixed(1)} MB` +
      (options ? `, index ${(index / 1e6).toFixed(1)} MB (${(index / textBytes).toFixed(2)} of the text), ${((ms - baseline.ms) / 1000).toFixed(1)} s added; ${found}` : `, ${(ms / 1000).toFixed(1)} s`),
  );
  db.close();
}
rmSync(tmp, { recursive: true, force: true });
