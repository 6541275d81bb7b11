import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sqlRows, sqlRun } from "../../src/db/sql";
import { harness, onPostgres, type Harness } from "../helpers/harness";

/**
 * A write that catches a failed statement and carries on. SQLite undoes only the statement;
 * PostgreSQL aborts the whole transaction and then answers its COMMIT with ROLLBACK, not an error.
 * Either way a write is acknowledged only when what it wrote is stored.
 */
let h: Harness;
beforeAll(async () => (h = await harness()));
afterAll(() => h.close());

async function stored(key: string): Promise<boolean> {
  return (await sqlRows(h.deps.store, "SELECT value FROM app_meta WHERE key = ?", [key])).length === 1;
}

function swallowing(key: string) {
  return async () => {
    await sqlRun(h.deps.store, "INSERT INTO app_meta (key, value) VALUES (?, ?)", [key, "x"]);
    try {
      await sqlRun(h.deps.store, "SELECT * FROM no_such_table");
    } catch {}
    return "done";
  };
}

describe("a write that swallowed a database error", () => {
  for (const coalesce of [true, false]) {
    test(`is acknowledged only if its rows are stored (${coalesce ? "coalesced" : "with a savepoint"})`, async () => {
      const key = `swallow-${coalesce}`;
      const outcome = await h.deps.writer.write(swallowing(key), { coalesce }).then(
        (v) => ({ ok: true, v }),
        (e) => ({ ok: false, v: e }),
      );
      expect(outcome.ok).toBe(await stored(key));
      // SQLite keeps the insert; PostgreSQL loses the transaction, and the write learns so.
      expect(outcome.ok).toBe(!onPostgres);
      // The writer goes on: the next write commits.
      await h.deps.writer.write(() => sqlRun(h.deps.store, "INSERT INTO app_meta (key, value) VALUES (?, ?)", [`${key}-after`, "y"]));
      expect(await stored(`${key}-after`)).toBe(true);
    });
  }
});
