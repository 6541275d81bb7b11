/**
 * A note's page routes without a browser: the save route's answers the editor tells apart
 * (session ended, refused form, the token in the body for a page that is closing), the token the
 * editor fetches after a new sign-in, "New note" with a title first, and an earlier version's preview.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { count, eq } from "drizzle-orm";
import { notes, sessions } from "../../src/db/tables";
import { ORIGIN, sessionBrowser } from "../helpers/form-browser";
import { harness, type Harness } from "../helpers/harness";

let h: Harness;
beforeEach(async () => {
  h = await harness();
});
afterEach(() => h.close());

const browserOf = (email: string) => sessionBrowser(h, email);

async function plainNote(a: { accountId: string; workspaceId: string }, title: string, text = ""): Promise<string> {
  const res = await h.request("POST", "/api/v1/notes", { token: await h.token(a), body: { note: { title, plain_body: text } } });
  expect(res.status).toBe(201);
  return (await res.json()).id;
}

async function bodyOf(id: string): Promise<string | null> {
  const [row] = await h.deps.db.select({ body: notes.body }).from(notes).where(eq(notes.id, id));
  return row!.body;
}

describe("the editor's save route", () => {
  test("a session that ended is a bare 401 for the editor and sign-in and back for a form; the text is not written", async () => {
    const a = await h.account("dev");
    const id = await plainNote(a, "n", "before");
    const b = await browserOf(a.email);
    await h.deps.db.delete(sessions);
    const editor = await b.json(`/notes/${id}/save`, { plain_body: "after" });
    expect(editor.status).toBe(401);
    const form = await b.form(`/notes/${id}/save`, { _csrf: b.csrf, plain_body: "after" });
    expect(form.status).toBe(303);
    expect(form.location).toBe(`/signin?next=${encodeURIComponent(`/notes/${id}`)}`);
    expect(await bodyOf(id)).toBe("before");
  });

  test("the CSRF token is taken from the body when no header can be set (a closing page), checked the same way", async () => {
    const a = await h.account("dev");
    const id = await plainNote(a, "n", "before");
    const b = await browserOf(a.email);
    const inBody = await h.request("POST", `/notes/${id}/save`, { headers: { cookie: b.cookie, origin: ORIGIN }, body: { _csrf: b.csrf, plain_body: "from the body" } });
    expect(inBody.status).toBe(200);
    expect(await bodyOf(id)).toBe("from the body");
    // As a beacon sends it: a form body, no header, Origin null vouched for by Sec-Fetch-Site.
    const beacon = await h.request("POST", `/notes/${id}/save`, {
      headers: { cookie: b.cookie, origin: "null", "sec-fetch-site": "same-origin", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: b.csrf, plain_body: "from a beacon" }).toString(),
    });
    expect(beacon.status).toBe(303);
    expect(await bodyOf(id)).toBe("from a beacon");
    const wrong = await h.request("POST", `/notes/${id}/save`, { headers: { cookie: b.cookie, origin: ORIGIN }, body: { _csrf: "x".repeat(32), plain_body: "forged" } });
    expect(wrong.status).toBe(403);
    const foreign = await h.request("POST", `/notes/${id}/save`, { headers: { cookie: b.cookie, origin: "https://evil.example" }, body: { _csrf: b.csrf, plain_body: "forged" } });
    expect(foreign.status).toBe(403);
    const crossSite = await h.request("POST", `/notes/${id}/save`, { headers: { cookie: b.cookie, origin: "null", "sec-fetch-site": "cross-site" }, body: { _csrf: b.csrf, plain_body: "forged" } });
    expect(crossSite.status).toBe(403);
    expect(await bodyOf(id)).toBe("from a beacon");
  });

  test("a confirmed save answers the note's new time; a refusal answers the envelope", async () => {
    const a = await h.account("dev");
    const id = await plainNote(a, "n", "before");
    const b = await browserOf(a.email);
    h.clock.advance(5_000);
    const ok = await b.json(`/notes/${id}/save`, { plain_body: "after" });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ ok: true, updated_at: new Date(h.clock.now()).toISOString() });
    const tooLong = await b.json(`/notes/${id}/save`, { title: "x".repeat(201) });
    expect(tooLong.status).toBe(422);
    expect((await tooLong.json()).error.code).toBe("validation_failed");
  });

  test("GET …/save gives the session's CSRF token to the page's script: 401 signed out, 404 for another's note", async () => {
    const a = await h.account("dev");
    const other = await h.account("dev");
    const id = await plainNote(a, "n");
    const theirs = await plainNote(other, "theirs");
    const b = await browserOf(a.email);
    const res = await b.get(`/notes/${id}/save`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ csrf_token: b.csrf, note_id: id });
    expect((await b.get(`/notes/${theirs}/save`)).status).toBe(404);
    expect((await h.request("GET", `/notes/${id}/save`)).status).toBe(401);
  });
});

describe("New note", () => {
  test("asks for a title first; nothing is created by opening the form, and an empty title is refused with the choices kept", async () => {
    const a = await h.account("free");
    const b = await browserOf(a.email);
    const folder = await b.form("/folders", { _csrf: b.csrf, name: "Work" });
    const folderId = new URL(folder.location, ORIGIN).searchParams.get("folder")!;
    const list = await b.get(`/notes?folder=${folderId}`);
    expect(list.text).toContain(`href="/notes/new?folder=${folderId}"`);
    const shown = await b.get(`/notes/new?format=rich&folder=${folderId}`);
    expect(shown.status).toBe(200);
    expect(shown.text).toMatch(/value="rich" checked/);
    const noteCount = async () => (await h.deps.db.select({ n: count() }).from(notes))[0]!.n;
    expect(await noteCount()).toBe(0);

    const empty = await b.form("/notes/create", { _csrf: b.csrf, title: "  ", format: "rich", folder_id: folderId });
    expect(empty.status).toBe(422);
    expect(empty.text).toContain("Give the note a title.");
    expect(empty.text).toMatch(/value="rich" checked/);
    expect(empty.text).toMatch(new RegExp(`value="${folderId}" selected`));
    expect(await noteCount()).toBe(0);

    const made = await b.form("/notes/create", { _csrf: b.csrf, title: " Plan ", format: "rich", folder_id: folderId });
    expect(made.status).toBe(303);
    const rows = await h.deps.db.select({ title: notes.title, format: notes.format, folder_id: notes.folderId }).from(notes);
    expect(rows).toEqual([{ title: "Plan", format: "rich", folder_id: folderId }]);
    expect((await b.form("/notes/create", { title: "No token" })).status).toBe(403);
  });

  test("a refusal that is not the title's (the plan's note cap, another workspace's folder) shows above the form, the title kept", async () => {
    const a = await h.account("free");
    const other = await h.account("dev");
    const b = await browserOf(a.email);
    const theirs = await h.request("POST", "/api/v1/folders", { token: await h.token(other), body: { folder: { name: "Theirs" } } });
    const foreignFolder = await b.form("/notes/create", { _csrf: b.csrf, title: "Mine", folder_id: (await theirs.json()).id });
    expect(foreignFolder.status).toBe(422);
    expect(foreignFolder.text).toContain('class="flash error"');
    expect(foreignFolder.text).toContain('value="Mine"');
    for (let i = 0; i < 10; i++) expect((await b.form("/notes/create", { _csrf: b.csrf, title: `n${i}` })).status).toBe(303);
    const full = await b.form("/notes/create", { _csrf: b.csrf, title: "Eleventh" });
    expect(full.status).toBe(403);
    expect(full.text).toContain('class="flash error"');
    expect(full.text).toContain('value="Eleventh"');
  });
});

describe("an earlier version's preview", () => {
  test("shows the version's text read only with a Restore; another account's note is a 404, a missing version goes back with a message", async () => {
    const a = await h.account("dev");
    const id = await plainNote(a, "Doc", "first <b>text</b>");
    const token = await h.token(a);
    await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { plain_body: "second" } } });
    const snap = (await (await h.request("GET", `/api/v1/notes/${id}/snapshots`, { token })).json())[0].id as string;
    const b = await browserOf(a.email);
    const page = await b.get(`/notes/${id}/snapshots/${snap}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("first &lt;b&gt;text&lt;/b&gt;");
    expect(page.text).toContain(`action="/notes/${id}/snapshots/${snap}/restore"`);
    const note = await b.get(`/notes/${id}`);
    expect(note.text).toContain(`href="/notes/${id}/snapshots/${snap}"`);

    const stranger = await browserOf((await h.account("dev")).email);
    expect((await stranger.get(`/notes/${id}/snapshots/${snap}`)).status).toBe(404);
    const gone = await b.get(`/notes/${id}/snapshots/snap_missing000000000000`);
    expect(gone.status).toBe(303);
    expect(decodeURIComponent(gone.location)).toContain("no longer kept");
  });
});
