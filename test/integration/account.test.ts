import { afterEach, describe, expect, test } from "bun:test";
import { count, eq, sql, type SQL } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { accounts, exportsTable, noteChunks, notes, oauthClients, oauthTokens, sessions, tokens, workspaceMembers, workspaces } from "../../src/db/tables";
import { sqlRun } from "../../src/db/sql";
import { issueTokens } from "../../src/modules/oauth/tokens";
import { hashPassword } from "../../src/modules/accounts/password";
import { createAccount } from "../../src/modules/accounts/service";
import { FormBrowser, fieldMessage, inputNamed } from "../helpers/form-browser";
import { exportZipKept } from "../helpers/exports";
import { errorOf, harness, type Harness } from "../helpers/harness";

let h: Harness;
afterEach(() => h.close());

describe("GET /account", () => {
  test("shows plan, state, usage and caps of the token's workspace", async () => {
    h = await harness();
    const a = await h.account("dev", "me@example.com");
    const token = await h.token(a);
    await h.request("POST", "/api/v1/notes/by-filename/s/append", { token, body: { text: "hello" } });
    const res = await h.request("GET", "/api/v1/account", { token });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      id: a.accountId,
      email: "me@example.com",
      plan: "dev",
      state: "active",
      limit_profile: "standard",
      api_access: true,
      workspace: { id: a.workspaceId, kind: "personal" },
      usage: { notes: 1, plain_notes: 1, rich_notes: 0, storage_bytes: 6, folders: 3, active_tokens: 1 },
      caps: {
        notes: null,
        plain_notes: 10_000,
        rich_notes: 1_000,
        storage_bytes: 15 * 1024 ** 3,
        plain_note_bytes: 3 * 1024 * 1024,
        folders: 100,
        active_tokens: 3,
      },
      rate_limits_per_minute: { reads: 600, writes: 60, appends: 300 },
    });
  });

  test("the alternate profile maps team to Dev-pro", async () => {
    h = await harness({ profile: "alternate" });
    const token = await h.token(await h.account("team"));
    const body = await (await h.request("GET", "/api/v1/account", { token })).json();
    expect(body.caps).toMatchObject({ plain_notes: 30_000, storage_bytes: 30 * 1024 ** 3, active_tokens: 10 });
  });
});

describe("OpenAPI", () => {
  test("GET /api/v1/openapi.json is an OpenAPI 3.1 document of every route, without auth", async () => {
    h = await harness();
    const res = await h.request("GET", "/api/v1/openapi.json");
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.openapi).toStartWith("3.1");
    expect(doc.info.title).toBe("notestream API");
    const paths = Object.keys(doc.paths);
    for (const p of [
      "/api/v1/notes",
      "/api/v1/notes/{id}",
      "/api/v1/notes/by-filename/{filename}",
      "/api/v1/notes/by-filename/{filename}/append",
      "/api/v1/notes/{id}/append",
      "/api/v1/notes/{id}/snapshots",
      "/api/v1/notes/{id}/snapshots/{snapshot_id}/restore",
      "/api/v1/folders",
      "/api/v1/folders/{id}",
      "/api/v1/account",
    ]) {
      expect(paths).toContain(p);
    }
    const append = doc.paths["/api/v1/notes/by-filename/{filename}/append"].post;
    expect(JSON.stringify(append.requestBody)).toContain("text");
    expect(Object.keys(append.responses)).toEqual(expect.arrayContaining(["200", "201"]));
    expect(doc.components.securitySchemes.bearer.scheme).toBe("bearer");
  });
});

test("the health probe answers without auth", async () => {
  h = await harness();
  const res = await h.request("GET", "/up");
  expect(res.status).toBe(200);
});

test("no request ever sees a stack trace: an internal failure is a 500 in the envelope", async () => {
  h = await harness();
  const token = await h.token(await h.account("dev"));
  await sqlRun(h.deps.store, sql`DROP TABLE snapshots`);
  const { id } = await (await h.request("POST", "/api/v1/notes", { token, body: { note: {} } })).json();
  const res = await h.request("GET", `/api/v1/notes/${id}/snapshots`, { token });
  expect(res.status).toBe(500);
  const err = await errorOf(res);
  expect(err.code).toBe("internal_error");
  expect(JSON.stringify(err)).not.toContain("at ");
});

describe("the account's password and its deletion, in the browser", () => {
  const PASSWORD = "Str0ng!pass";
  let sent: { to: string; subject: string; text: string }[];
  let n = 0;

  async function start() {
    h = await harness();
    sent = [];
    h.deps.mailer = { send: async (m) => void sent.push(m) };
  }

  /** A confirmed account with a password, signed in in a browser of its own. */
  async function signedIn(email: string, plan: "free" | "dev" = "dev") {
    const passwordHash = await hashPassword(PASSWORD);
    const made = await h.deps.writer.write(() => createAccount(h.deps, { email, plan, passwordHash, ageConfirmed: true }));
    const b = await browserFor(email, PASSWORD, "/onboarding");
    return { b, accountId: made.account.id, workspaceId: made.workspaceId };
  }

  /** Signs in a new browser; the account's first sign-in lands on the onboarding, later ones on the notes. */
  async function browserFor(email: string, password = PASSWORD, lands = "/notes") {
    const b = new FormBrowser(h, `203.0.113.${++n}`);
    expect((await b.submit("/signin", "/signin", { email, password })).location).toBe(lands);
    return b;
  }

  async function grantFor(ids: { accountId: string; workspaceId: string }) {
    return h.deps.writer.write(async () => {
      await h.deps.db.insert(oauthClients).values({ clientId: `client_${++n}`, clientName: "Agent", redirectUris: "[]", metadata: "{}", createdAt: h.clock.now() });
      return issueTokens(h.deps, { clientId: `client_${n}`, ...ids, scope: "notes:read notes:write" });
    });
  }

  /** The HTTP status /mcp answers an initialize with, for this Bearer token. */
  async function mcpStatus(token: string): Promise<number> {
    const res = await h.request("POST", "/mcp", {
      token,
      headers: { accept: "application/json, text/event-stream" },
      body: { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } },
    });
    await res.text();
    return res.status;
  }

  const rowsIn = async (table: SQLiteTable, where: SQL) => (await h.deps.db.select({ n: count() }).from(table).where(where))[0]!.n;

  test("a new password needs the current one, signs the other browsers out, and leaves API tokens alone", async () => {
    await start();
    const me = await signedIn("changer@example.com");
    const other = await browserFor("changer@example.com");
    const token = await h.token(me);
    const csrf = me.b.csrfOf((await me.b.get("/settings")).text);

    const done = await me.b.post("/settings/password", { _csrf: csrf, current_password: PASSWORD, new_password: "Correct-horse-battery-9" });
    expect(done.status).toBe(303);
    expect(decodeURIComponent(done.location)).toContain("Your password is changed");
    expect((await me.b.get("/settings")).status).toBe(200);
    expect((await other.get("/settings")).headers.get("location")).toStartWith("/signin");
    expect((await new FormBrowser(h, "203.0.113.200").submit("/signin", "/signin", { email: "changer@example.com", password: PASSWORD })).status).toBe(400);
    await browserFor("changer@example.com", "Correct-horse-battery-9");
    expect((await h.request("GET", "/api/v1/notes", { token })).status).toBe(200);
    await h.jobs.drain();
    expect(sent.filter((m) => m.to === "changer@example.com").map((m) => m.subject)).toEqual(["[notestream] your password was changed"]);
  }, 30_000);

  test("only wrong current passwords use up the password form's budget", async () => {
    await start();
    const me = await signedIn("guesser@example.com", "free");
    const csrf = me.b.csrfOf((await me.b.get("/settings")).text);
    const change = (current: string, next: string) => me.b.post("/settings/password", { _csrf: csrf, current_password: current, new_password: next });
    // Five changes that went through, then five wrong guesses: the sixth guess waits.
    const passwords = [PASSWORD, "Second-pass1", "Third-pass1", "Fourth-pass1", "Fifth-pass1", "Sixth-pass1"];
    for (let i = 0; i < 5; i++) expect((await change(passwords[i]!, passwords[i + 1]!)).status).toBe(303);
    for (let i = 0; i < 5; i++) expect((await change("Wrong-guess1", "Whatever-pass1")).status).toBe(422);
    const limited = await change("Sixth-pass1", "Seventh-pass1");
    expect(limited.status).toBe(429);
    expect(limited.text).toContain("Too many attempts");
  }, 60_000);

  test("deleting the account: the export offered first, the password, a mailed link, then everything it owns goes", async () => {
    await start();
    const me = await signedIn("leaving@example.com");
    const other = await browserFor("leaving@example.com");
    const token = await h.token(me);
    const grant = await grantFor(me);
    const stream = await (await h.request("POST", "/api/v1/notes/by-filename/deploys.log/append", { token, body: { text: "deploy ok" } })).json();
    // More notes than one batch of the deletion job takes.
    for (let i = 0; i < 5; i++) {
      const notes = Array.from({ length: 50 }, (_, j) => ({ title: `note ${i * 50 + j}`, plain_body: "text" }));
      expect((await h.request("POST", "/api/v1/notes/bulk", { token, body: { notes } })).status).toBe(201);
    }
    // A team of someone else's, which the account belongs to: the team and its notes stay.
    const teamOwner = await h.account("team", "owner@example.com");
    const teamId = await h.team("owner@example.com", ["leaving@example.com"]);
    const teamToken = await h.token({ accountId: teamOwner.accountId, workspaceId: teamId });
    expect((await h.request("POST", "/api/v1/notes/by-filename/team.log/append", { token: teamToken, body: { text: "shared" } })).status).toBe(201);

    expect(await mcpStatus(grant.access_token)).toBe(200);
    const page = (await me.b.get("/settings/delete")).text;
    expect(page).toContain('<form method="post" action="/settings/export">');
    expect(page.indexOf('action="/settings/export"')).toBeLessThan(page.indexOf('action="/settings/delete"'));
    const csrf = me.b.csrfOf(page);
    expect((await me.b.post("/settings/export", { _csrf: csrf })).status).toBe(303);
    await h.jobs.drain();
    const [built] = await h.deps.db.select({ id: exportsTable.id, status: exportsTable.status }).from(exportsTable);
    expect(built!.status).toBe("ready");
    expect(await exportZipKept(h, built!.id)).toBe(true);

    const wrong = await me.b.post("/settings/delete", { _csrf: csrf, password: "Wrong1!pass" });
    expect(wrong.status).toBe(422);
    expect(fieldMessage(wrong.text, "password")).toEqual({ invalid: true, message: "That is not your current password." });
    const asked = await me.b.post("/settings/delete", { _csrf: csrf, password: PASSWORD });
    expect(decodeURIComponent(asked.location)).toContain("We sent a link to leaving@example.com");
    await h.jobs.drain();
    const mail = sent.find((m) => m.subject.includes("deleting your account"))!;
    expect(mail.to).toBe("leaving@example.com");
    const link = /http:\/\/notestream\.test(\/settings\/delete\/confirm\?token=\w+)/.exec(mail.text)![1]!;

    // Opening the link (a mail scanner may) deletes nothing; the button on its page does.
    const anywhere = new FormBrowser(h, "203.0.113.250");
    const confirm = await anywhere.get(link);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain("Delete leaving@example.com?");
    expect(await rowsIn(accounts, eq(accounts.id, me.accountId))).toBe(1);
    const gone = await anywhere.post("/settings/delete/confirm", { _csrf: anywhere.csrfOf(confirm.text), token: inputNamed(confirm.text, "token").match(/value="(\w+)"/)![1]! });
    expect(gone.status).toBe(303);
    expect(decodeURIComponent(gone.location)).toContain("is deleted");

    // At once: nothing of it works.
    expect((await h.request("GET", "/api/v1/notes", { token })).status).toBe(401);
    expect(await mcpStatus(grant.access_token)).toBe(401);
    expect((await other.get("/settings")).headers.get("location")).toStartWith("/signin");
    expect((await new FormBrowser(h, "203.0.113.251").submit("/signin", "/signin", { email: "leaving@example.com", password: PASSWORD })).status).toBe(400);

    // Then the job erases it all.
    await h.jobs.drain();
    expect(await rowsIn(accounts, eq(accounts.id, me.accountId))).toBe(0);
    expect(await rowsIn(workspaces, eq(workspaces.ownerId, me.accountId))).toBe(0);
    expect(await rowsIn(notes, eq(notes.workspaceId, me.workspaceId))).toBe(0);
    expect(await rowsIn(noteChunks, eq(noteChunks.noteId, stream.id))).toBe(0);
    expect(await rowsIn(tokens, eq(tokens.accountId, me.accountId))).toBe(0);
    expect(await rowsIn(oauthTokens, eq(oauthTokens.accountId, me.accountId))).toBe(0);
    expect(await rowsIn(sessions, eq(sessions.accountId, me.accountId))).toBe(0);
    expect(await rowsIn(exportsTable, eq(exportsTable.accountId, me.accountId))).toBe(0);
    expect(await exportZipKept(h, built!.id)).toBe(false);
    expect(await rowsIn(workspaceMembers, eq(workspaceMembers.workspaceId, teamId))).toBe(1);
    expect(await rowsIn(notes, eq(notes.workspaceId, teamId))).toBe(1);
    expect(sent.filter((m) => m.to === "leaving@example.com").at(-1)!.subject).toBe("[notestream] your account is deleted");
    // The address is free again; the link does not work twice.
    expect((await anywhere.get(link)).status).toBe(400);
  }, 60_000);

  test("an account that owns a team others use cannot be deleted until they have left", async () => {
    await start();
    const me = await signedIn("boss@example.com", "free");
    await h.account("free", "worker@example.com");
    await h.team("boss@example.com", ["worker@example.com"]);
    const page = (await me.b.get("/settings/delete")).text;
    expect(page).toContain("the team “Team” (1 other member)");
    const r = await me.b.post("/settings/delete", { _csrf: me.b.csrfOf(page), password: PASSWORD });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/role="alert"[^>]*>You own the team &quot;Team&quot;, which other people use/);
    await h.jobs.drain();
    expect(sent.filter((m) => m.subject.includes("deleting"))).toEqual([]);
  }, 30_000);
});
