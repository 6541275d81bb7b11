// The durable ceiling: the least a durable append can be on this machine with this stack. A bare
// Bun.serve parses the same JSON, queues the line, and the queue is written as one INSERT per
// batch (SQLite, WAL) and made durable with an fdatasync of the log off the event loop, as
// notestream does, before each request is answered. No tokens, limits, checks, counters or log.
import { Database } from "bun:sqlite";
import { fdatasync, mkdtempSync, openSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = process.env.DATA_DIR ?? mkdtempSync(join(tmpdir(), "notestream-minimal-"));
const db = new Database(join(dir, "minimal.db"), { create: true });
db.run("PRAGMA journal_mode = WAL");
db.run("PRAGMA synchronous = NORMAL");
db.run("CREATE TABLE lines (seq INTEGER PRIMARY KEY, text TEXT NOT NULL)");
const insert = db.query("INSERT INTO lines (text) VALUES (?)");
const begin = db.query("BEGIN IMMEDIATE");
const commit = db.query("COMMIT");
const durable = process.env.SYNC !== "NORMAL";

let queue: { line: string; answer: (r: Response) => void }[] = [];
let scheduled = false;
let syncing = false;
let fd = -1;

function schedule(): void {
  if (scheduled || syncing || queue.length === 0) return;
  scheduled = true;
  setImmediate(flush);
}

// Like notestream's writer: one transaction per turn of the event loop, and while a batch waits
// for its fsync the next one gathers.
function flush(): void {
  scheduled = false;
  const batch = queue;
  queue = [];
  begin.run();
  insert.run(batch.map((b) => b.line).join(""));
  commit.run();
  const answer = () => {
    for (const b of batch) b.answer(Response.json({ ok: true }));
  };
  if (!durable) return answer();
  if (fd < 0) fd = openSync(join(dir, "minimal.db-wal"), "r");
  syncing = true;
  fdatasync(fd, () => {
    syncing = false;
    answer();
    schedule();
  });
}

const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: "127.0.0.1",
  async fetch(req) {
    const body = (await req.json()) as { text: string };
    return new Promise<Response>((answer) => {
      queue.push({ line: `${body.text}\n`, answer });
      schedule();
    });
  },
});
console.log(JSON.stringify({ msg: "listening", port: server.port }));
