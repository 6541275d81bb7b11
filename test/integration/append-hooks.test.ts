import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { sqlRows, sqlRun } from "../../src/db/sql";
import { appendBatchOf } from "../../src/modules/streams/append/batch";
import type { AppendHook } from "../../src/modules/streams/append/hooks";
import { AFTER_APPEND } from "../../src/runtime";
import { harness } from "../helpers/harness";

/**
 * What an append causes is a list of hooks (runtime.ts AFTER_APPEND). A side effect added as one
 * more hook gets the append's promise: it commits with the append or not at all.
 */
describe("after-append hooks", () => {
  test("a hook's write commits with its append, and one that throws fails only its own append, leaving nothing of it", async () => {
    const h = await harness();
    const a = await h.account("dev");
    const token = await h.token(a, ["append"]);
    const committed: string[][] = [];
    const titling: AppendHook = {
      appended: async (deps, { note, line }) => {
        if (line === "boom\n") throw new Error("the hook failed");
        await sqlRun(deps.store, "UPDATE notes SET title = ? WHERE id = ?", [`after ${line.trim()}`, note.id]);
      },
      committed: (_deps, noteIds) => void committed.push([...noteIds]),
    };
    appendBatchOf(h.deps).attach(h.deps, [...AFTER_APPEND, titling]);
    const append = (text: string) => h.request("POST", "/api/v1/notes/by-filename/hooks.log/append", { token, body: { text } });

    const first = await append("one");
    expect(first.status).toBe(201);
    const id: string = (await first.json()).id;
    const statuses = (await Promise.all([append("two"), append("boom"), append("three")])).map((r) => r.status);
    expect(statuses).toEqual([200, 500, 200]);

    const [note] = await sqlRows<{ title: string; size: number | string }>(h.deps.store, "SELECT title, byte_size AS size FROM notes WHERE id = ?", [id]);
    expect(note!.title).toBe("after three");
    expect(Number(note!.size)).toBe("one\ntwo\nthree\n".length);
    const chunks = await sqlRows<{ text: string }>(h.deps.store, "SELECT text FROM note_chunks WHERE note_id = ? ORDER BY seq", [id]);
    expect(chunks.map((c) => c.text).join("")).toBe("one\ntwo\nthree\n");
    const [ws] = await sqlRows<{ used: number | string }>(h.deps.store, "SELECT storage_used AS used FROM workspaces WHERE id = ?", [a.workspaceId]);
    expect(Number(ws!.used)).toBe("one\ntwo\nthree\n".length);
    // Told once per committed batch that wrote the stream, never of the failed append alone.
    expect(committed.length).toBeGreaterThanOrEqual(2);
    for (const ids of committed) expect(ids).toEqual([id]);
    await h.close();
  });

  test("only the append slice and the composition root know the append's batch and its overlay writes", () => {
    const src = resolve(import.meta.dir, "../../src");
    const inner = /from "[^"]*streams\/append\/(batch|overlay-sqlite|overlay-pg|pg-vector)"/;
    const outside = [...new Bun.Glob("**/*.ts").scanSync(src)].filter(
      (f) => !f.startsWith("modules/streams/append/") && f !== "runtime.ts" && inner.test(readFileSync(join(src, f), "utf8")),
    );
    expect(outside).toEqual([]);
    const generic = [...new Bun.Glob("{db,http,lib,jobs}/**/*.ts").scanSync(src)].filter((f) => /overlay|appendBatch/i.test(readFileSync(join(src, f), "utf8")));
    expect(generic).toEqual([]);
  });
});
