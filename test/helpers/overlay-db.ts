import { Database } from "bun:sqlite";
import { Writer } from "../../src/db/writer";
import { AppendBatch } from "../../src/modules/streams/append/batch";
import { sqliteOverlayWrites } from "../../src/modules/streams/append/overlay-sqlite";

/** An in-memory database with the tables an append's overlay writes, one note ('n') and one workspace ('w'). */
export function overlayDb() {
  const db = new Database(":memory:");
  db.run("CREATE TABLE notes (id TEXT PRIMARY KEY, byte_size INTEGER, updated_at INTEGER, last_write_at INTEGER, expected_interval_seconds INTEGER, deadman_due_at INTEGER, schedule TEXT)");
  db.run("CREATE TABLE workspaces (id TEXT PRIMARY KEY, storage_used INTEGER)");
  db.run("CREATE TABLE note_chunks (seq INTEGER PRIMARY KEY, note_id TEXT NOT NULL, text TEXT NOT NULL, at INTEGER NOT NULL DEFAULT 0)");
  db.run("INSERT INTO notes VALUES ('n', 0, 0, 0, NULL, NULL, NULL)");
  db.run("INSERT INTO workspaces VALUES ('w', 0)");
  const batch = new AppendBatch(sqliteOverlayWrites(db));
  return { db, batch, writer: new Writer(db, null, batch) };
}
