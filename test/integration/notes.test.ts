import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { notes } from "../../src/db/tables";
import { errorOf, harness, type Harness } from "../helpers/harness";

let h: Harness;
let token: string;
beforeEach(async () => {
  h = await harness();
  token = await h.token(await h.account("dev"), ["read", "write"]);
});
afterEach(() => h.close());

const create = (note: Record<string, unknown>) => h.request("POST", "/api/v1/notes", { token, body: { note } });

describe("editable notes", () => {
  test("create answers 201 with the note record, plain and editable", async () => {
    const res = await create({ title: "Runbook", plain_body: "step 1\nstep 2" });
    expect(res.status).toBe(201);
    const note = await res.json();
    expect(note).toMatchObject({
      kind: "editable",
      format: "plain",
      filename: null,
      title: "Runbook",
      folder_id: null,
      byte_size: 13,
      plain_body: "step 1\nstep 2",
    });
    expect(note.id).toStartWith("note_");
    for (const f of ["created_at", "updated_at", "last_write_at"]) expect(note[f]).toMatch(/Z$/);
  });

  test("title defaults to Untitled; control characters are stripped from titles on save", async () => {
    expect((await (await create({})).json()).title).toBe("Untitled");
    const note = await (await create({ title: "a\r\nb\u0000c\td" })).json();
    expect(note.title).toBe("abcd");
  });

  test("a title over 200 characters is 422; exactly 200 (even multi-byte) is fine", async () => {
    const long = await create({ title: "x".repeat(201) });
    expect(long.status).toBe(422);
    expect((await errorOf(long)).details[0]).toMatchObject({ field: "note.title", code: "too_long" });
    expect((await create({ title: "é".repeat(200) })).status).toBe(201);
  });

  test("a missing note wrapper is 422 with the field named", async () => {
    const res = await h.request("POST", "/api/v1/notes", { token, body: { title: "no wrapper" } });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details[0]).toMatchObject({ field: "note", code: "required" });
  });

  test("read by id returns plain_body; update changes title and body; delete moves it to the trash", async () => {
    const { id } = await (await create({ title: "t", plain_body: "one" })).json();
    const read = await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json();
    expect(read.plain_body).toBe("one");

    h.clock.advance(1000);
    const patched = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { title: "t2", plain_body: "two!" } } });
    expect(patched.status).toBe(200);
    const p = await patched.json();
    expect(p).toMatchObject({ title: "t2", plain_body: "two!", byte_size: 4 });
    expect(Date.parse(p.updated_at)).toBeGreaterThan(Date.parse(read.updated_at));

    const del = await h.request("DELETE", `/api/v1/notes/${id}`, { token });
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ id, deleted: true });
    expect((await h.request("GET", `/api/v1/notes/${id}`, { token })).status).toBe(404);
    expect((await h.request("DELETE", `/api/v1/notes/${id}`, { token })).status).toBe(404);
    const trash = await (await h.request("GET", "/api/v1/trash", { token })).json();
    expect(trash).toMatchObject([{ id, title: "t2", byte_size: 4 }]);
  });

  test("format is immutable: a PATCH that changes it is refused", async () => {
    const { id } = await (await create({ title: "t" })).json();
    const res = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { format: "rich" } } });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details[0]).toMatchObject({ field: "note.format", code: "immutable" });
    expect((await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { format: "plain" } } })).status).toBe(200);
  });

  test("a stream's body cannot be replaced (423), its title can change", async () => {
    const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/s.log/append", { token, body: { text: "x" } })).json();
    const res = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { plain_body: "replaced" } } });
    expect(res.status).toBe(423);
    expect((await errorOf(res)).code).toBe("note_locked");
    const renamed = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { title: "Deploys" } } });
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toMatchObject({ title: "Deploys", filename: "s.log", plain_body: "x\n" });
  });

  test("the API never writes rich-text notes (423), but may move or delete them", async () => {
    const { id } = await (await create({ title: "r" })).json();
    await h.deps.db.update(notes).set({ format: "rich" }).where(eq(notes.id, id));
    for (const note of [{ title: "x" }, { plain_body: "x" }]) {
      const res = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note } });
      expect(res.status).toBe(423);
      expect((await errorOf(res)).code).toBe("note_locked");
    }
    const folders = await (await h.request("GET", "/api/v1/folders", { token })).json();
    expect((await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { folder_id: folders[0].id } } })).status).toBe(200);
    expect((await h.request("DELETE", `/api/v1/notes/${id}`, { token })).status).toBe(200);
  });

  test("notes move between folders by PATCH folder_id; null unfiles; a foreign folder is 422", async () => {
    const [folder] = await (await h.request("GET", "/api/v1/folders", { token })).json();
    const { id } = await (await create({ title: "t", folder_id: folder.id })).json();
    let note = await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json();
    expect(note.folder_id).toBe(folder.id);
    note = await (await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { folder_id: null } } })).json();
    expect(note.folder_id).toBeNull();

    const other = await h.account("dev");
    const otherToken = await h.token(other);
    const [foreign] = await (await h.request("GET", "/api/v1/folders", { token: otherToken })).json();
    const res = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { folder_id: foreign.id } } });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details[0]).toMatchObject({ field: "note.folder_id", code: "not_found" });
  });

  test("a malformed folder id is 422 naming note.folder_id on create and PATCH, never a 500", async () => {
    const { id } = await (await create({ title: "t" })).json();
    for (const folder_id of ["", "note_3kTMdAbCdEfGhIjKlMnOp", `fold_${"a".repeat(65)}`, "fold_abc\u0000", "fold_abc def", 42]) {
      for (const res of [
        await create({ title: "", plain_body: "", folder_id }),
        await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { folder_id } } }),
      ]) {
        expect(res.status).toBe(422);
        const err = await errorOf(res);
        expect(err.code).toBe("validation_failed");
        expect(err.details[0].field).toBe("note.folder_id");
      }
    }
    expect((await h.request("GET", "/api/v1/notes", { token })).headers.get("x-total-count")).toBe("1");
  });

  test("a well-formed folder id of no folder is refused like a foreign one", async () => {
    const missing = "fold_00000000000000000000";
    const res = await create({ title: "t", folder_id: missing });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details).toEqual([{ field: "note.folder_id", code: "not_found", message: expect.stringContaining(missing) }]);
    const { id } = await (await create({ title: "t" })).json();
    const patched = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { folder_id: missing } } });
    expect((await errorOf(patched)).details[0]).toMatchObject({ field: "note.folder_id", code: "not_found" });
  });

  test("read by filename finds streams only; an unknown filename is 404", async () => {
    await h.request("POST", "/api/v1/notes/by-filename/a%20b.log/append", { token, body: { text: "x" } });
    expect((await h.request("GET", "/api/v1/notes/by-filename/a%20b.log", { token })).status).toBe(200);
    const missing = await h.request("GET", "/api/v1/notes/by-filename/nope.log", { token });
    expect(missing.status).toBe(404);
    expect((await errorOf(missing)).code).toBe("not_found");
  });
});

describe("listing", () => {
  test("bare array without bodies, newest first, with X-Total-Count and RFC 8288 Link", async () => {
    for (let i = 0; i < 7; i++) {
      await create({ title: `n${i}`, plain_body: "body" });
      h.clock.advance(1000);
    }
    const res = await h.request("GET", "/api/v1/notes?limit=3&offset=3", { token });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-total-count")).toBe("7");
    const items = await res.json();
    expect(items.map((n: { title: string }) => n.title)).toEqual(["n3", "n2", "n1"]);
    expect(items[0].plain_body).toBeUndefined();
    const link = res.headers.get("link")!;
    expect(link).toContain('<http://notestream.test/api/v1/notes?limit=3&offset=0>; rel="first"');
    expect(link).toContain('<http://notestream.test/api/v1/notes?limit=3&offset=0>; rel="prev"');
    expect(link).toContain('<http://notestream.test/api/v1/notes?limit=3&offset=6>; rel="next"');
    expect(link).toContain('<http://notestream.test/api/v1/notes?limit=3&offset=6>; rel="last"');
  });

  test("limit defaults to 50 and is clamped to 200; a bad limit is 422", async () => {
    const res = await h.request("GET", "/api/v1/notes?limit=5000", { token });
    expect(res.status).toBe(200);
    expect(res.headers.get("link")).toContain("limit=200");
    expect((await h.request("GET", "/api/v1/notes", { token })).headers.get("link")).toContain("limit=50");
    for (const q of ["limit=abc", "limit=0", "offset=-1"]) {
      const bad = await h.request("GET", `/api/v1/notes?${q}`, { token });
      expect(bad.status).toBe(422);
      expect((await errorOf(bad)).code).toBe("validation_failed");
    }
  });

  test("filters by kind and folder, keeping the filter in the Link header", async () => {
    const [folder] = await (await h.request("GET", "/api/v1/folders", { token })).json();
    await create({ title: "filed", folder_id: folder.id });
    await create({ title: "loose" });
    await h.request("POST", "/api/v1/notes/by-filename/s.log/append", { token, body: { text: "x" } });
    const streams = await h.request("GET", "/api/v1/notes?kind=stream", { token });
    expect((await streams.json()).map((n: { filename: string }) => n.filename)).toEqual(["s.log"]);
    expect(streams.headers.get("link")).toContain("kind=stream");
    const filed = await (await h.request("GET", `/api/v1/notes?folder_id=${folder.id}`, { token })).json();
    expect(filed.map((n: { title: string }) => n.title)).toEqual(["filed"]);
  });
});

describe("the folder_id filter", () => {
  test("a malformed folder id is 422 naming folder_id rather than silently listing every note", async () => {
    await create({ title: "loose" });
    for (const q of ["folder_id=", "folder_id=note_x", `folder_id=fold_${"a".repeat(65)}`, "folder_id=fold_%00"]) {
      const res = await h.request("GET", `/api/v1/notes?${q}`, { token });
      expect(res.status).toBe(422);
      expect((await errorOf(res)).details).toEqual([{ field: "folder_id", code: "invalid", message: expect.any(String) }]);
    }
  });

  test("a well-formed folder id of no folder lists nothing", async () => {
    await create({ title: "loose" });
    const res = await h.request("GET", "/api/v1/notes?folder_id=fold_00000000000000000000", { token });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([]);
  });
});

describe("routing and envelope", () => {
  test("an unknown path is 404 in the envelope with a request id", async () => {
    const res = await h.request("GET", "/api/v1/nope", { token });
    expect(res.status).toBe(404);
    expect((await errorOf(res)).code).toBe("not_found");
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
  });

  test("every answer carries a distinct X-Request-Id, success and error alike", async () => {
    const ids = new Set<string>();
    for (const res of [
      await h.request("GET", "/api/v1/notes", { token }),
      await h.request("GET", "/api/v1/notes"),
      await create({ title: 5 }),
    ]) {
      expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9A-Za-z]{16}$/);
      ids.add(res.headers.get("x-request-id")!);
    }
    expect(ids.size).toBe(3);
  });
});

describe("malformed input never reaches a 500", () => {
  test("broken percent-encoding in a path is 422 naming the parameter", async () => {
    const res = await h.request("GET", "/api/v1/notes/by-filename/%E0%A4%A", { token });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details[0]).toMatchObject({ field: "filename", code: "invalid", message: "is not valid percent-encoded UTF-8" });
  });

  test("bodies of the wrong shape are 422, unparseable ones 400", async () => {
    for (const body of ["[]", '"str"', "null", '{"note": null}']) {
      const res = await h.request("POST", "/api/v1/notes", { token, body });
      expect(res.status).toBe(422);
    }
    for (const body of ["[".repeat(100_000), "", "{'single': 'quotes'}"]) {
      const res = await h.request("POST", "/api/v1/notes/by-filename/x/append", { token, body });
      expect(res.status).toBe(400);
      expect((await errorOf(res)).code).toBe("bad_request");
    }
  });

  test("a body holding NUL is refused naming the field, on either database, never a 500", async () => {
    // PostgreSQL's text cannot hold U+0000; SQLite's can: refused on both, so both answer alike.
    const made = await create({ title: "a", plain_body: "x\u0000y" });
    expect(made.status).toBe(422);
    expect((await errorOf(made)).details[0]).toMatchObject({ field: "note.plain_body", code: "invalid" });
    const bulk = await h.request("POST", "/api/v1/notes/bulk", { token, body: { notes: [{ title: "b", plain_body: "\u0000" }] } });
    expect(bulk.status).toBe(422);
    expect((await errorOf(bulk)).details[0]).toMatchObject({ field: "notes.0.plain_body", code: "invalid" });
    const id = (await (await create({ title: "c" })).json()).id;
    const patched = await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { plain_body: "\u0000" } } });
    expect(patched.status).toBe(422);
    expect((await errorOf(patched)).details[0]).toMatchObject({ field: "note.plain_body", code: "invalid" });
  });

  test("lone surrogates are refused rather than silently changed", async () => {
    const res = await h.request("POST", "/api/v1/notes/by-filename/x/append", { token, body: '{"text": "a\\ud800b"}' });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details[0]).toMatchObject({ field: "text", code: "invalid" });
  });
});
