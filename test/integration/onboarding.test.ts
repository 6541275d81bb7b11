import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { accounts, notes, tokens, workspaces } from "../../src/db/tables";
import type { PlanName } from "../../src/limits/plans";
import { FIRST_STREAM } from "../../src/modules/accounts/onboarding";
import { hashPassword } from "../../src/modules/accounts/password";
import { createAccount } from "../../src/modules/accounts/service";
import { getWorkspace } from "../../src/modules/workspaces/repo";
import { FormBrowser } from "../helpers/form-browser";
import { harness, onPostgres, type Harness } from "../helpers/harness";

const PASSWORD = "Onb0ard!ing";
let h: Harness;
let n = 0;
beforeEach(async () => {
  h = await harness();
});
afterEach(async () => {
  await h.close();
});

async function account(plan: PlanName = "free") {
  const email = `onboard${++n}@example.com`;
  const passwordHash = await hashPassword(PASSWORD);
  const made = await h.deps.writer.write(() => createAccount(h.deps, { email, plan, passwordHash, ageConfirmed: true }));
  return { email, accountId: made.account.id, workspaceId: made.workspaceId };
}

async function signIn(email: string, next?: string) {
  const b = new FormBrowser(h, `198.51.100.${++n}`);
  const csrf = b.csrfOf((await b.get("/signin")).text);
  const r = await b.post("/signin", { _csrf: csrf, email, password: PASSWORD, ...(next ? { next } : {}) });
  expect(r.status).toBe(303);
  return { b, location: r.location };
}

const streamsOf = async (workspaceId: string) => (await h.deps.db.select().from(notes).where(eq(notes.workspaceId, workspaceId))).filter((r) => r.kind === "stream");
const activeTokens = async (workspaceId: string) => (await h.deps.db.select().from(tokens).where(eq(tokens.workspaceId, workspaceId))).filter((t) => t.revokedAt === null);
/** Changes the workspace's row directly, through the writer. */
const setWorkspace = (workspaceId: string, set: Partial<typeof workspaces.$inferInsert>) =>
  h.deps.writer.write(async () => {
    await h.deps.db.update(workspaces).set(set).where(eq(workspaces.id, workspaceId));
  });

/** The token a code-mode page shows once, read off the page as a person would copy it. */
const tokenOn = (page: string) => /id="new-token" value="(nst_\w+)"/.exec(page)?.[1] ?? null;

describe("the first sign-in", () => {
  test("lands on the onboarding once; later sign-ins go to the notes", async () => {
    const a = await account();
    expect((await signIn(a.email)).location).toBe("/onboarding");
    expect((await signIn(a.email)).location).toBe("/notes");
    expect((await signIn(a.email)).location).toBe("/notes");
  });

  test("a sign-in on its way somewhere (an AI client's consent) goes there, and the onboarding waits for the next plain one", async () => {
    const a = await account();
    expect((await signIn(a.email, "/notes?folder=x")).location).toBe("/notes?folder=x");
    expect((await signIn(a.email)).location).toBe("/onboarding");
    expect((await signIn(a.email)).location).toBe("/notes");
  });

  test("the onboarding page offers the browser, code (with the trial it starts) and skipping", async () => {
    const a = await account();
    const { b } = await signIn(a.email);
    const page = (await b.get("/onboarding")).text;
    expect(page).toContain('name="mode" value="browser"');
    expect(page).toContain('name="mode" value="code"');
    expect(page).toContain("Starts your 14-day API trial now");
    expect(page).toContain('<a href="/notes">Skip for now</a>');
  });
});

describe("code mode", () => {
  test("starts the trial, makes a stream and a token that appends; the page shows the token once with the commands", async () => {
    const a = await account("free");
    const { b } = await signIn(a.email);
    const csrf = b.csrfOf((await b.get("/onboarding")).text);
    const chosen = await b.post("/onboarding", { _csrf: csrf, mode: "code" });
    expect(chosen.status).toBe(303);
    const [stream] = await streamsOf(a.workspaceId);
    expect(stream!.filename).toBe(FIRST_STREAM);
    expect(chosen.location).toBe(`/onboarding/code?stream=${stream!.id}`);

    const ws = await getWorkspace(h.deps, a.workspaceId);
    expect(ws.state).toBe("trial");
    expect(ws.trialUsed).toBe(true);
    const [usage] = await h.deps.db.select({ mode: accounts.usageMode }).from(accounts).where(eq(accounts.id, a.accountId));
    expect(usage!.mode).toBe("code");

    const page = (await b.get(chosen.location)).text;
    const token = tokenOn(page)!;
    expect(token).toMatch(/^nst_/);
    expect(page).toContain(`curl -X POST http://notestream.test/api/v1/notes/by-filename/${FIRST_STREAM}/append -H &quot;Authorization: Bearer ${token}&quot;`);
    expect(page).toContain(`NOTESTREAM_URL=http://notestream.test NOTESTREAM_TOKEN=${token} notestream append ${FIRST_STREAM}`);
    expect(page).toContain(`&quot;NOTESTREAM_TOKEN&quot;: &quot;${token}&quot;`);
    expect(page).toContain(`data-tail="/notes/${stream!.id}/events"`);

    // The token works: the curl line's request, and `account show`'s view of the trial.
    const appended = await h.request("POST", `/api/v1/notes/by-filename/${FIRST_STREAM}/append`, { token, body: "hello from curl", headers: { "content-type": "text/plain" } });
    expect(appended.status).toBe(200);
    expect((await h.request("GET", "/api/v1/account", { token })).status).toBe(200);
    // Shown once: a reload has placeholders.
    const again = (await b.get(chosen.location)).text;
    expect(tokenOn(again)).toBeNull();
    expect(again).not.toContain(token);
    expect(again).toContain("NOTESTREAM_TOKEN=nst_…");
  });

  test("a second run starts no second trial: the same stream, one more token", async () => {
    const a = await account("free");
    const { b } = await signIn(a.email);
    for (let i = 0; i < 2; i++) {
      const csrf = b.csrfOf((await b.get("/onboarding")).text);
      expect((await b.post("/onboarding", { _csrf: csrf, mode: "code" })).status).toBe(303);
    }
    expect((await streamsOf(a.workspaceId)).length).toBe(1);
    expect((await activeTokens(a.workspaceId)).length).toBe(2);
    expect((await getWorkspace(h.deps, a.workspaceId)).state).toBe("trial");
  });

  test("on a plan with the API no trial is started", async () => {
    const a = await account("dev");
    const { b } = await signIn(a.email);
    const csrf = b.csrfOf((await b.get("/onboarding")).text);
    expect((await b.post("/onboarding", { _csrf: csrf, mode: "code" })).status).toBe(303);
    const ws = await getWorkspace(h.deps, a.workspaceId);
    expect([ws.state, ws.trialUsed]).toEqual(["active", false]);
    expect((await streamsOf(a.workspaceId)).length).toBe(1);
  });

  test("once the trial is used up, code mode is refused with where the API is, and nothing is made", async () => {
    const a = await account("free");
    await setWorkspace(a.workspaceId, { trialUsed: true });
    const { b } = await signIn(a.email);
    const page = (await b.get("/onboarding")).text;
    expect(page).not.toContain('value="code"');
    expect(page).toContain("has had its API trial");
    // A crafted post is refused the same way.
    const r = await b.post("/onboarding", { _csrf: b.csrfOf(page), mode: "code" });
    expect(r.location).toStartWith("/onboarding?error=");
    expect(decodeURIComponent(r.location)).toContain("has had its API trial");
    expect(await streamsOf(a.workspaceId)).toEqual([]);
    expect(await activeTokens(a.workspaceId)).toEqual([]);
  });

  test("at the token cap the whole step is undone: no trial, no stream", async () => {
    const a = await account("free");
    const { b } = await signIn(a.email);
    // A trial grants 3 tokens; a workspace already holding 3 (minted while on dev) has no room.
    await setWorkspace(a.workspaceId, { plan: "dev" });
    for (let i = 0; i < 3; i++) await h.token(a, ["read"]);
    await setWorkspace(a.workspaceId, { plan: "free" });
    const csrf = b.csrfOf((await b.get("/onboarding")).text);
    const r = await b.post("/onboarding", { _csrf: csrf, mode: "code" });
    expect(decodeURIComponent(r.location)).toContain("allows 3 active API tokens");
    const ws = await getWorkspace(h.deps, a.workspaceId);
    expect([ws.state, ws.trialUsed]).toEqual(["active", false]);
    expect(await streamsOf(a.workspaceId)).toEqual([]);
  });

  test("the code page of a note that is not this account's stream goes back to the choice", async () => {
    const a = await account("dev");
    const other = await account("dev");
    const theirs = await h.request("POST", "/api/v1/notes/by-filename/theirs.log/append", { token: await h.token(other, ["append"]), body: { text: "x" } });
    const { b } = await signIn(a.email);
    const r = await b.get(`/onboarding/code?stream=${(await theirs.json()).id}`);
    expect([r.status, r.headers.get("location")]).toEqual([303, "/onboarding"]);
  });
});

describe("browser mode", () => {
  test("goes to the notes and is remembered; the account page leads back to the onboarding", async () => {
    const a = await account();
    const { b } = await signIn(a.email);
    const csrf = b.csrfOf((await b.get("/onboarding")).text);
    const r = await b.post("/onboarding", { _csrf: csrf, mode: "browser" });
    expect(r.location).toBe("/notes");
    expect((await getWorkspace(h.deps, a.workspaceId)).state).toBe("active");
    const settings = (await b.get("/settings")).text;
    expect(settings).toContain("mostly for writing in the browser");
    expect(settings).toContain('href="/onboarding"');
  });

  test("an unknown choice is refused with a message, not a 500", async () => {
    const a = await account();
    const { b } = await signIn(a.email);
    const csrf = b.csrfOf((await b.get("/onboarding")).text);
    const r = await b.post("/onboarding", { _csrf: csrf, mode: "everything" });
    expect(r.location).toStartWith("/onboarding?error=");
  });

  test("without a session the onboarding asks to sign in", async () => {
    const res = await h.request("GET", "/onboarding", { headers: { accept: "text/html" } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/signin?next=${encodeURIComponent("/onboarding")}`);
    const post = await h.request("POST", "/onboarding", { body: "mode=code", headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://notestream.test" } });
    expect(post.status).toBe(403);
  });
});

describe("upgrading", () => {
  // SQLite only: PostgreSQL's migrations begin with onboarding in place, so there is no 0015 to upgrade through.
  test.skipIf(onPostgres)("migration 0015 sends accounts in use before it to the notes, and unconfirmed ones still to the onboarding", async () => {
    const before = await account();
    const unconfirmed = await account();
    await h.deps.db.update(accounts).set({ emailConfirmedAt: null }).where(eq(accounts.id, unconfirmed.accountId));
    const sql = readFileSync(join(import.meta.dir, "../../migrations/0015_onboarding.sql"), "utf8").split("--> statement-breakpoint").at(-1)!;
    // SQLite only: the migration's own SQL, as the migrator runs it.
    h.deps.db.$client.exec(sql);
    expect((await signIn(before.email)).location).toBe("/notes");
    await h.deps.db.update(accounts).set({ emailConfirmedAt: 1 }).where(eq(accounts.id, unconfirmed.accountId));
    expect((await signIn(unconfirmed.email)).location).toBe("/onboarding");
  });
});
