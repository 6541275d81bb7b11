import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { count, eq } from "drizzle-orm";
import { snapshots as snapshotsTable } from "../../src/db/tables";
import { errorOf, harness, type Harness } from "../helpers/harness";

let h: Harness;
let token: string;
beforeEach(async () => {
  h = await harness();
  token = await h.token(await h.account("dev"));
});
afterEach(() => h.close());

const MIN = 60 * 1000;
const save = (id: string, plain_body: string) => h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { plain_body } } });
const snapshots = async (id: string) => (await (await h.request("GET", `/api/v1/notes/${id}/snapshots`, { token })).json()) as any[];
const bodyOf = async (id: string, snap: string) =>
  (await (await h.request("GET", `/api/v1/notes/${id}/snapshots/${snap}`, { token })).json()).plain_body as string;

async function newNote(body = "v0"): Promise<string> {
  return (await (await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "doc", plain_body: body } } })).json()).id;
}

describe("snapshots", () => {
  test("saves within ten minutes of each other share one snapshot holding the content before them", async () => {
    const id = await newNote("v0");
    await save(id, "v1");
    h.clock.advance(4 * MIN);
    await save(id, "v2");
    h.clock.advance(9 * MIN); // 13 minutes after the first save, but 9 after the previous one
    await save(id, "v3");
    let list = await snapshots(id);
    expect(list).toHaveLength(1);
    expect(await bodyOf(id, list[0].id)).toBe("v0");

    h.clock.advance(10 * MIN); // a pause of ten minutes starts a new snapshot
    await save(id, "v4");
    list = await snapshots(id);
    expect(list).toHaveLength(2);
    expect(await bodyOf(id, list[0].id)).toBe("v3"); // newest first
    expect(await bodyOf(id, list[1].id)).toBe("v0");
  });

  test("at most five are kept: the sixth evicts the oldest permanently", async () => {
    const id = await newNote("v0");
    for (let i = 1; i <= 6; i++) {
      await save(id, `v${i}`);
      h.clock.advance(11 * MIN);
    }
    const list = await snapshots(id);
    expect(list).toHaveLength(5);
    const bodies = await Promise.all(list.map((s) => bodyOf(id, s.id)));
    expect(bodies).toEqual(["v5", "v4", "v3", "v2", "v1"]);
    const [stored] = await h.deps.db.select({ n: count() }).from(snapshotsTable).where(eq(snapshotsTable.body, "v0"));
    expect(stored!.n).toBe(0);
  });

  test("restore captures the current content first, so it can be undone", async () => {
    const id = await newNote("original");
    await save(id, "edited");
    const [snap] = await snapshots(id);
    h.clock.advance(1 * MIN);
    const restored = await h.request("POST", `/api/v1/notes/${id}/snapshots/${snap.id}/restore`, { token });
    expect(restored.status).toBe(200);
    expect(await restored.json()).toMatchObject({ id, plain_body: "original", byte_size: 8 });
    const list = await snapshots(id);
    expect(list).toHaveLength(2);
    expect(await bodyOf(id, list[0].id)).toBe("edited");
    // Undo the restore.
    const undo = await h.request("POST", `/api/v1/notes/${id}/snapshots/${list[0].id}/restore`, { token });
    expect((await undo.json()).plain_body).toBe("edited");
  });

  test("a save that changes nothing, or only moves the note, takes no snapshot", async () => {
    const id = await newNote("same");
    await save(id, "same");
    const [folder] = await (await h.request("GET", "/api/v1/folders", { token })).json();
    await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { folder_id: folder.id } } });
    expect(await snapshots(id)).toHaveLength(0);
  });

  test("title changes are saves too", async () => {
    const id = await newNote("b");
    await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { title: "renamed" } } });
    const [snap] = await snapshots(id);
    expect(snap.title).toBe("doc");
  });

  test("streams never snapshot", async () => {
    const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/s/append", { token, body: { text: "x" } })).json();
    for (let i = 0; i < 3; i++) {
      await h.request("POST", `/api/v1/notes/${id}/append`, { token, body: { text: `${i}` } });
      await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { title: `t${i}` } } });
      h.clock.advance(11 * MIN);
    }
    expect(await snapshots(id)).toEqual([]);
  });

  test("an unknown snapshot or one of another note is 404", async () => {
    const a = await newNote();
    const b = await newNote();
    await save(b, "changed");
    const [snap] = await snapshots(b);
    const res = await h.request("POST", `/api/v1/notes/${a}/snapshots/${snap.id}/restore`, { token });
    expect(res.status).toBe(404);
    expect((await errorOf(res)).code).toBe("not_found");
    expect((await h.request("GET", `/api/v1/notes/${a}/snapshots/snap_nope`, { token })).status).toBe(404);
  });
});
