import { afterEach, beforeEach, describe, expect, spyOn, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { buildHandler } from "../../src/app";
import { and, count, eq, sql } from "drizzle-orm";
import { accounts, notes, oauthClients, workspaces } from "../../src/db/tables";
import { sqlRun } from "../../src/db/sql";
import { issueTokens } from "../../src/modules/oauth/tokens";
import { PASSWORD_MAX_CHARS, PASSWORD_MIN_CHARS, PASSWORD_RULE } from "../../src/modules/accounts/password";
import { BIO_MAX_CHARS, NAME_MAX_CHARS } from "../../src/modules/accounts/web-auth";
import { FOLDER_NAME_MAX_CHARS, TITLE_MAX_CHARS } from "../../src/lib/text";
import { FormBrowser, ORIGIN, fieldMessage, inputNamed } from "../helpers/form-browser";
import { errorOf, harness, type Harness } from "../helpers/harness";

let h: Harness;
let sent: { to: string; subject: string; text: string }[];
beforeEach(async () => {
  h = await harness();
  sent = [];
  h.deps.mailer = { send: async (m) => void sent.push(m) };
});
afterEach(() => h.close());

/** The harness's browser, on this file's harness. */
class Browser extends FormBrowser {
  constructor(ip?: string) {
    super(h, ip);
  }
}

async function signUpAndIn(b: Browser, email: string) {
  const r = await b.submit("/signup", "/signup", { email, password: "Str0ng!pass", age_confirmed: "yes" });
  expect(r.status).toBe(303);
  await h.jobs.drain();
  const mail = sent.find((m) => m.to === email && m.subject.includes("confirm"))!;
  const link = /http:\/\/notestream\.test(\/confirm\?token=\w+)/.exec(mail.text)![1]!;
  expect((await b.get(link)).status).toBe(303);
  const signedIn = await b.submit("/signin", "/signin", { email, password: "Str0ng!pass" });
  expect(signedIn.location).toBe("/onboarding");
}

describe("sign-up checks", () => {
  test("password rules, age and disposable domains are refused with a clear message", async () => {
    let n = 0;
    const cases: [Record<string, string>, RegExp][] = [
      [{ email: "a@example.com", password: "short1!", age_confirmed: "yes" }, /8 to 128 characters/],
      [{ email: "a@example.com", password: "alllower1!", age_confirmed: "yes" }, /uppercase letter/],
      [{ email: "a@example.com", password: "NoDigits!!", age_confirmed: "yes" }, /digit/],
      [{ email: "a@example.com", password: "NoSpecial12", age_confirmed: "yes" }, /needs a symbol/],
      [{ email: "a@example.com", password: "Str0ng!pass", birth_date: "2015-01-01" }, /16 or older/],
      [{ email: "a@example.com", password: "Str0ng!pass" }, /birth date or confirm/],
      [{ email: "a@mailinator.com", password: "Str0ng!pass", age_confirmed: "yes" }, /Disposable e-mail addresses/],
    ];
    for (const [fields, expected] of cases) {
      // Each from its own address: sign-up allows 5 attempts an hour per address.
      const r = await new Browser(`198.51.100.${++n}`).submit("/signup", "/signup", fields);
      expect(r.status).toBe(422);
      expect(r.text).toMatch(expected);
    }
    expect(await accountCount()).toBe(0);
  });

  test("sign-up: the 6th sign-up in an hour from one address answers 429", async () => {
    const b = new Browser("198.51.100.200");
    for (let i = 0; i < 5; i++) expect((await b.submit("/signup", "/signup", { email: `x${i}@example.com`, password: "Str0ng!pass", age_confirmed: "yes" })).status).toBe(303);
    const r = await b.submit("/signup", "/signup", { email: "y@example.com", password: "Str0ng!pass", age_confirmed: "yes" });
    expect(r.status).toBe(429);
    expect(r.text).toContain("Too many attempts");
  }, 20_000);

  test("sign-up: forms refused for their mistakes do not use up the address's budget", async () => {
    const b = new Browser("198.51.100.201");
    const mistakes: Record<string, string>[] = [
      { email: "a@b", password: "Str0ng!pass", age_confirmed: "yes" },
      { email: "x@mailinator.com", password: "Str0ng!pass", age_confirmed: "yes" },
      { email: "x@example.com", password: "weak", age_confirmed: "yes" },
      { email: "x@example.com", password: "Str0ng!pass" },
      { email: "x@example.com", password: "Str0ng!pass", birth_date: "2020-01-01" },
      { email: "x@example.com", password: "NoSymbol123", age_confirmed: "yes" },
    ];
    for (const fields of mistakes) expect((await b.submit("/signup", "/signup", fields)).status).toBe(422);
    // After six refusals the person who fixed the form still gets in.
    expect((await b.submit("/signup", "/signup", { email: "x@example.com", password: "Str0ng!pass", age_confirmed: "yes" })).status).toBe(303);
  });

  test("a passphrase whose symbols are outside the specification's set is accepted", async () => {
    const r = await new Browser("198.51.100.202").submit("/signup", "/signup", { email: "phrase@example.com", password: "Correct-horse-battery-9", age_confirmed: "yes" });
    expect(r.status).toBe(303);
    expect(await accountCount("phrase@example.com")).toBe(1);
  });

  test("an unconfirmed account cannot sign in until the mailed link is followed", async () => {
    const b = new Browser();
    await b.submit("/signup", "/signup", { email: "new@example.com", password: "Str0ng!pass", birth_date: "1990-05-01" });
    const early = await b.submit("/signin", "/signin", { email: "new@example.com", password: "Str0ng!pass" });
    expect(early.status).toBe(400);
    expect(early.text).toContain("Confirm your e-mail address first");
    await h.jobs.drain();
    const link = /(\/confirm\?token=\w+)/.exec(sent[0]!.text)![1]!;
    await b.get(link);
    expect((await b.submit("/signin", "/signin", { email: "new@example.com", password: "Str0ng!pass" })).location).toBe("/onboarding");
    // A used link does not work twice.
    expect((await b.get(link)).headers.get("location")).toContain("error=");
    // Three folders are seeded at sign-up.
    expect((await b.get("/notes")).text).toContain("Inbox");
  });
});

describe("CSRF and ownership", () => {
  test("a cross-site POST without the CSRF token is refused, and one with a foreign Origin too", async () => {
    const b = new Browser();
    await signUpAndIn(b, "owner@example.com");
    const noToken = await b.post("/notes/new", { format: "plain" });
    expect(noToken.status).toBe(403);
    const page = (await b.get("/notes")).text;
    const csrf = b.csrfOf(page);
    const foreign = await b.post("/notes/new", { _csrf: csrf, format: "plain" }, { origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    const ok = await b.post("/notes/new", { _csrf: csrf, format: "plain" });
    expect(ok.status).toBe(303);
    expect(ok.location).toMatch(/^\/notes\/note_/);
    // Sign-in and sign-up forms are protected as well (double-submit cookie).
    const outsider = new Browser("203.0.113.50");
    expect((await outsider.post("/signin", { email: "owner@example.com", password: "Str0ng!pass" })).status).toBe(403);
  });

  test("another account's note page is 404", async () => {
    const alice = new Browser("198.51.100.1");
    await signUpAndIn(alice, "alice@example.com");
    const created = await alice.post("/notes/new", { _csrf: alice.csrfOf((await alice.get("/notes")).text), format: "plain" });
    const notePath = created.location;
    expect((await alice.get(notePath)).status).toBe(200);
    const bob = new Browser("198.51.100.2");
    await signUpAndIn(bob, "bob@example.com");
    const seen = await bob.get(notePath);
    expect(seen.status).toBe(404);
    expect(seen.text).not.toContain("Untitled");
    expect((await bob.get(`${notePath}/download/txt`)).status).toBe(404);
    // Signed out, pages send you to sign in.
    const anon = new Browser("198.51.100.3");
    expect((await anon.get(notePath)).headers.get("location")).toBe(`/signin?next=${encodeURIComponent(notePath)}`);
  });
});

describe("browser rate limits", () => {
  test("sign-in: the 11th attempt in a minute from one address answers 429 with a clear message", async () => {
    const b = new Browser("192.0.2.77");
    const csrf = b.csrfOf((await b.get("/signin")).text);
    for (let i = 0; i < 10; i++) {
      const r = await b.post("/signin", { _csrf: csrf, email: `nobody${i}@example.com`, password: "Wrong1!pass" });
      expect(r.status).toBe(400);
    }
    const limited = await b.post("/signin", { _csrf: csrf, email: "nobody@example.com", password: "Wrong1!pass" });
    expect(limited.status).toBe(429);
    expect(limited.text).toContain("Too many attempts");
  });

  test("sign-in: 5 per 20 minutes per e-mail, from any address", async () => {
    for (let i = 0; i < 5; i++) {
      const b = new Browser(`192.0.2.${i + 1}`);
      expect((await b.submit("/signin", "/signin", { email: "target@example.com", password: "Wrong1!pass" })).status).toBe(400);
    }
    const b = new Browser("192.0.2.99");
    expect((await b.submit("/signin", "/signin", { email: "target@example.com", password: "Wrong1!pass" })).status).toBe(429);
    h.clock.advance(20 * 60_000);
    expect((await b.submit("/signin", "/signin", { email: "target@example.com", password: "Wrong1!pass" })).status).toBe(400);
  });

  test("note saves: 30 a minute per account", async () => {
    const b = new Browser();
    await signUpAndIn(b, "saver@example.com");
    const created = await b.post("/notes/new", { _csrf: b.csrfOf((await b.get("/notes")).text), format: "plain" });
    const csrf = b.csrfOf((await b.get(created.location)).text);
    for (let i = 0; i < 30; i++) {
      const r = await b.post(`${created.location}/save`, { _csrf: csrf, title: "t", plain_body: `v${i}` });
      expect(r.location).toContain("ok=");
    }
    const limited = await b.post(`${created.location}/save`, { _csrf: csrf, title: "t", plain_body: "one too many" });
    expect(decodeURIComponent(limited.location)).toContain("Too many attempts");
  });
});

describe("password reset and e-mail change", () => {
  test("a mailed reset link sets a new password; the old one stops working", async () => {
    const b = new Browser();
    await signUpAndIn(b, "forgetful@example.com");
    await new Browser("203.0.113.9").submit("/reset", "/reset", { email: "forgetful@example.com" });
    await h.jobs.drain();
    const mail = sent.find((m) => m.subject.includes("reset"))!;
    const token = /token=(\w+)/.exec(mail.text)![1]!;
    const other = new Browser("203.0.113.10");
    const done = await other.submit(`/reset/confirm?token=${token}`, "/reset/confirm", { token, password: "N3w!password" });
    expect(decodeURIComponent(done.location)).toContain("Your password is changed");
    expect((await other.submit("/signin", "/signin", { email: "forgetful@example.com", password: "Str0ng!pass" })).status).toBe(400);
    expect((await other.submit("/signin", "/signin", { email: "forgetful@example.com", password: "N3w!password" })).location).toBe("/notes");
  });

  test("an e-mail change is confirmed from the new address", async () => {
    const b = new Browser();
    await signUpAndIn(b, "old@example.com");
    const csrf = b.csrfOf((await b.get("/settings")).text);
    await b.post("/settings/email", { _csrf: csrf, email: "new@example.com", password: "Str0ng!pass" });
    await h.jobs.drain();
    const mail = sent.find((m) => m.to === "new@example.com")!;
    const link = /(\/settings\/email\/confirm\?token=\w+)/.exec(mail.text)![1]!;
    await b.get(link);
    expect((await b.get("/settings")).text).toContain("new@example.com");
  });
});

describe("rich-text notes", () => {
  test("made in the browser, sanitised, readable over the API as plain text, locked to API writes, downloadable as DOCX and PDF", async () => {
    const b = new Browser();
    await signUpAndIn(b, "writer@example.com");
    const created = await b.post("/notes/new", { _csrf: b.csrfOf((await b.get("/notes")).text), format: "rich" });
    const path = created.location;
    const csrf = b.csrfOf((await b.get(path)).text);
    const save = await h.request("POST", `${path}/save`, {
      headers: { cookie: [...b.cookies].map(([k, v]) => `${k}=${v}`).join("; "), "x-csrf-token": csrf, origin: ORIGIN },
      body: { title: "Plan", html: '<h2>Q3</h2><p>Ship <strong>it</strong> &amp; <a href="javascript:alert(1)">celebrate</a></p><script>alert(1)</script><ul><li>one</li><li>two</li></ul><img src=x onerror=alert(1)>' },
    });
    expect(save.status).toBe(200);
    const stored = (
      await h.deps.db
        .select({ rich_html: notes.richHtml, body: notes.body, format: notes.format })
        .from(notes)
        .where(eq(notes.id, path.split("/")[2]!))
    )[0] as { rich_html: string; body: string; format: string };
    expect(stored.format).toBe("rich");
    expect(stored.rich_html).not.toMatch(/script|onerror|javascript:|<img/i);
    expect(stored.rich_html).toContain("<strong>it</strong>");
    expect(stored.body).toBe("Q3\nShip it & celebrate\n- one\n- two\n");

    // The API (during a trial, which opens it) reads the plain projection and may not write.
    await h.deps.db.update(workspaces).set({ state: "trial", trialEndsAt: h.clock.now() + 86_400_000 });
    const token = await h.token(await idsOf("writer@example.com"));
    const id = path.split("/")[2]!;
    const read = await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json();
    expect(read).toMatchObject({ format: "rich", title: "Plan", plain_body: "Q3\nShip it & celebrate\n- one\n- two\n" });
    expect((await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { plain_body: "x" } } })).status).toBe(423);

    const docx = await h.request("GET", `${path}/download/docx`, { headers: { cookie: [...b.cookies].map(([k, v]) => `${k}=${v}`).join("; ") } });
    expect(docx.headers.get("content-type")).toContain("wordprocessingml");
    expect(new Uint8Array(await docx.arrayBuffer()).slice(0, 2)).toEqual(new Uint8Array([0x50, 0x4b]));
    const pdf = await h.request("GET", `${path}/download/pdf`, { headers: { cookie: [...b.cookies].map(([k, v]) => `${k}=${v}`).join("; ") } });
    expect(new TextDecoder().decode(new Uint8Array(await pdf.arrayBuffer()).slice(0, 5))).toBe("%PDF-");
  });
});

describe("rich-text notes hold no NUL", () => {
  test("a save whose HTML holds U+0000 (a crafted post; editors never send it) is stored without it, as HTML parsers drop it, on either database", async () => {
    const b = new Browser();
    await signUpAndIn(b, "nul@example.com");
    const path = (await b.post("/notes/new", { _csrf: b.csrfOf((await b.get("/notes")).text), format: "rich" })).location;
    const csrf = b.csrfOf((await b.get(path)).text);
    const save = await h.request("POST", `${path}/save`, {
      headers: { cookie: [...b.cookies].map(([k, v]) => `${k}=${v}`).join("; "), "x-csrf-token": csrf, origin: ORIGIN },
      body: { title: "Log", html: "<p>a\u0000b</p><p title=\"x\u0000y\">c</p>" },
    });
    expect(save.status).toBe(200);
    const [stored] = await h.deps.db.select({ rich_html: notes.richHtml, body: notes.body }).from(notes).where(eq(notes.id, path.split("/")[2]!));
    expect(stored!.rich_html).not.toContain("\u0000");
    expect(stored!.body).toBe("ab\nc\n");
  });
});

const cookieOf = (b: Browser) => [...b.cookies].map(([k, v]) => `${k}=${v}`).join("; ");

async function idsOf(email: string): Promise<{ accountId: string; workspaceId: string }> {
  const [account] = await h.deps.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.email, email));
  const [ws] = await h.deps.db
    .select({ id: workspaces.id })
    .from(workspaces)
    .where(and(eq(workspaces.ownerId, account!.id), eq(workspaces.kind, "personal")));
  return { accountId: account!.id, workspaceId: ws!.id };
}

/** Accounts in the database, or with this address. */
async function accountCount(email?: string): Promise<number> {
  return (await h.deps.db.select({ n: count() }).from(accounts).where(email === undefined ? undefined : eq(accounts.email, email)))[0]!.n;
}

/** A plan set directly, as the operator's command would. */
function setPlan(workspaceId: string, plan: string) {
  return h.deps.db.update(workspaces).set({ plan }).where(eq(workspaces.id, workspaceId));
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

/** The SDK's own MCP client, talking to the app in-process. */
async function mcpClient(token: string): Promise<Client> {
  const handle = buildHandler(h.deps);
  const client = new Client({ name: "test-agent", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      fetch: async (url, init) => handle(new Request(String(url), init), "127.0.0.1"),
    }),
  );
  return client;
}

describe("the sign-in redirect", () => {
  test("next= leads only to a page of this service, however it is spelled", async () => {
    await signUpAndIn(new Browser("198.51.100.60"), "walker@example.com");
    const hostile = [
      "/\\evil.example/x",
      "//evil.example",
      "/\t/evil.example",
      "https://evil.example",
      "javascript:alert(1)",
      "/%5Cevil.example",
      "/.//evil.example",
      "http://notestream.test.evil.example/",
    ];
    const signInWith = async (next: string, n: number) => {
      // A fresh address and a fresh per-e-mail window for each: only the redirect is under test.
      h.clock.advance(20 * 60_000);
      return new Browser(`198.51.100.${70 + n}`).submit("/signin", "/signin", { email: "walker@example.com", password: "Str0ng!pass", next });
    };
    for (const [i, next] of hostile.entries()) {
      const r = await signInWith(next, i);
      expect(r.status).toBe(303);
      // What a browser does with the Location header: resolve it against the page's URL.
      expect({ next, origin: new URL(r.location, ORIGIN).origin }).toEqual({ next, origin: ORIGIN });
      expect(r.location).toMatch(/^\/(?![\\/])/);
    }
    expect((await signInWith("/notes/note_x?q=a#top", 20)).location).toBe("/notes/note_x?q=a#top");
    expect((await signInWith(`${ORIGIN}/settings/tokens`, 21)).location).toBe("/settings/tokens");
  }, 30_000);
});

describe("per-e-mail limits", () => {
  test("sign-in: spaces and capitals do not open a fresh per-e-mail budget", async () => {
    for (let i = 0; i < 5; i++) {
      expect((await new Browser(`192.0.2.${i + 1}`).submit("/signin", "/signin", { email: "alice@example.com", password: "Wrong1!pass" })).status).toBe(400);
    }
    let n = 10;
    for (const email of [" alice@example.com", "ALICE@example.com ", "Alice@Example.COM", "\talice@example.com\n"]) {
      const r = await new Browser(`192.0.2.${n++}`).submit("/signin", "/signin", { email, password: "Wrong1!pass" });
      expect({ email, status: r.status }).toEqual({ email, status: 429 });
    }
  });

  test("sign-in: only failed attempts use up the per-e-mail budget", async () => {
    await signUpAndIn(new Browser("192.0.2.50"), "regular@example.com");
    const attempt = (i: number, password: string) => new Browser(`192.0.2.${60 + i}`).submit("/signin", "/signin", { email: "regular@example.com", password });
    for (let i = 0; i < 6; i++) expect((await attempt(i, "Str0ng!pass")).location).toBe("/notes");
    for (let i = 10; i < 15; i++) expect((await attempt(i, "Wrong1!pass")).status).toBe(400);
    expect((await attempt(20, "Wrong1!pass")).status).toBe(429);
    // Once the failures spent it, the right password waits too: guessing cannot go on beside it.
    expect((await attempt(21, "Str0ng!pass")).status).toBe(429);
    // Thirteen Argon2 checks and a sign-up: seconds on a busy machine.
  }, 30_000);

  test("reset and resend: one budget per address, however it is written (no mail bombing)", async () => {
    await signUpAndIn(new Browser("192.0.2.80"), "bombed@example.com");
    await new Browser("192.0.2.81").submit("/signup", "/signup", { email: "unconfirmed@example.com", password: "Str0ng!pass", age_confirmed: "yes" });
    const spellings = (e: string) => [e, ` ${e.toUpperCase()}`, `${e.replace("example", "EXAMPLE")} `, e[0]!.toUpperCase() + e.slice(1)];
    let n = 0;
    for (let i = 0; i < 8; i++) await new Browser(`203.0.113.${++n}`).submit("/reset", "/reset", { email: spellings("bombed@example.com")[i % 4]! });
    for (let i = 0; i < 8; i++) await new Browser(`203.0.113.${++n}`).submit("/confirm/resend", "/confirm/resend", { email: spellings("unconfirmed@example.com")[i % 4]! });
    await h.jobs.drain();
    expect(sent.filter((m) => m.to === "bombed@example.com" && m.subject.includes("reset")).length).toBe(5);
    // The sign-up's own mail, then five resends.
    expect(sent.filter((m) => m.to === "unconfirmed@example.com" && m.subject.includes("confirm")).length).toBe(1 + 5);
  });

  test("e-mail change: one budget per target address, however it is written", async () => {
    const targets = ["victim@example.com", " VICTIM@example.com", "victim@Example.com "];
    for (const [i, who] of ["a1@example.com", "a2@example.com"].entries()) {
      const b = new Browser(`192.0.2.${90 + i}`);
      await signUpAndIn(b, who);
      const csrf = b.csrfOf((await b.get("/settings")).text);
      for (const email of targets) await b.post("/settings/email", { _csrf: csrf, email, password: "Str0ng!pass" });
    }
    await h.jobs.drain();
    expect(sent.filter((m) => m.to === "victim@example.com").length).toBe(3);
  });
});

describe("account discovery", () => {
  test("sign-up with a taken address answers exactly as a new one, and mails the owner instead", async () => {
    const b = new Browser("198.51.100.120");
    const signUp = async (password: string) => {
      const r = await b.submit("/signup", "/signup", { email: "owner@example.com", password, age_confirmed: "yes" });
      return { status: r.status, location: r.location, text: r.text, page: (await b.get(r.location)).text };
    };
    const fresh = await signUp("Str0ng!pass");
    expect(fresh.status).toBe(303);
    const unconfirmed = await signUp("0ther!Pass");
    expect(unconfirmed).toEqual(fresh);
    await h.jobs.drain();
    await b.get(/(\/confirm\?token=\w+)/.exec(sent.find((m) => m.to === "owner@example.com")!.text)![1]!);
    const confirmed = await signUp("Th1rd!Pass");
    expect(confirmed).toEqual(fresh);

    await h.jobs.drain();
    const mails = sent.filter((m) => m.to === "owner@example.com");
    expect(mails.length).toBe(3);
    for (const m of mails.slice(1)) {
      expect(m.subject).toContain("sign up");
      expect(m.text).toContain("http://notestream.test/reset");
      expect(m.text).not.toContain("token=");
    }
    // Nothing else changed: one account, with the first password.
    expect(await accountCount()).toBe(1);
    expect((await b.submit("/signin", "/signin", { email: "owner@example.com", password: "0ther!Pass" })).status).toBe(400);
    expect((await b.submit("/signin", "/signin", { email: "owner@example.com", password: "Str0ng!pass" })).location).toBe("/onboarding");
  });

  test("sign-up mails an address at most 5 times an hour, however it is written", async () => {
    await signUpAndIn(new Browser("198.51.100.125"), "popular@example.com");
    const attempt = (email: string, n: number) => new Browser(`198.51.100.${200 + n}`).submit("/signup", "/signup", { email, password: "Str0ng!pass", age_confirmed: "yes" });
    // Four more after the first: five valid sign-ups for the address this hour.
    for (let i = 0; i < 4; i++) expect((await attempt(i % 2 ? " POPULAR@example.com" : "popular@example.com", i)).status).toBe(303);
    expect((await attempt("Popular@Example.com", 20)).status).toBe(429);
    await h.jobs.drain();
    // The first sign-up's confirmation, then four notices.
    expect(sent.filter((m) => m.to === "popular@example.com").length).toBe(1 + 4);
  });

  test("sign-in with an unknown address runs the same password check as with a known one", async () => {
    await signUpAndIn(new Browser("198.51.100.130"), "known@example.com");
    await h.account("free", "no-password@example.com");
    const realHash = (await h.deps.db.select({ hash: accounts.passwordHash }).from(accounts).where(eq(accounts.email, "known@example.com")))[0]!.hash!;
    const verify = spyOn(Bun.password, "verify");
    try {
      const attempt = (email: string, n: number) => new Browser(`198.51.100.${131 + n}`).submit("/signin", "/signin", { email, password: "Str0ng!pass1" });
      const known = await attempt("known@example.com", 0);
      const unknown = await attempt("nobody@example.com", 1);
      const noPassword = await attempt("no-password@example.com", 2);
      expect(verify).toHaveBeenCalledTimes(3);
      // The same algorithm and cost as a real hash, so the answer takes as long.
      const params = (hash: string) => hash.split("$").slice(0, 4);
      for (const call of verify.mock.calls) expect(params(call[1] as string)).toEqual(params(realHash));
      // The form comes back with the address typed and its own CSRF token; nothing else may differ.
      const page = (r: { text: string }, email: string) => r.text.replaceAll(email, "EMAIL").replace(/name="_csrf" value="[^"]+"/g, "");
      expect([unknown.status, page(unknown, "nobody@example.com")]).toEqual([known.status, page(known, "known@example.com")]);
      expect([noPassword.status, page(noPassword, "no-password@example.com")]).toEqual([known.status, page(known, "known@example.com")]);
    } finally {
      verify.mockRestore();
    }
  });
});

describe("odd input on pages", () => {
  test("a page number that is not a sane positive whole number shows the first page, not an error", async () => {
    const b = new Browser();
    await signUpAndIn(b, "pager@example.com");
    for (const p of ["1e400", "Infinity", "-3", "0", "2.5", "abc", "99999999999999999999", "0x10", "", "1,2"]) {
      const r = await b.get(`/notes?page=${encodeURIComponent(p)}`);
      expect({ p, status: r.status }).toEqual({ p, status: 200 });
      expect(r.text).toContain("<h3>Folders</h3>");
    }
    // The live tail's cursor is checked as the API's is, and only for a signed-in browser.
    const stream = await idsOf("pager@example.com");
    await setPlan(stream.workspaceId, "dev");
    const note = await (await h.request("POST", "/api/v1/notes/by-filename/t.log/append", { token: await h.token(stream), body: { text: "a" } })).json();
    for (const cursor of ["1e400", "-1", "x"]) expect((await b.get(`/notes/${note.id}/events?cursor=${cursor}`)).status).toBe(422);
    expect((await new Browser().get(`/notes/${note.id}/events`)).status).toBe(401);
  });

  test("a save whose fields are not strings is refused with 422 in the error envelope, and changes nothing", async () => {
    const b = new Browser();
    await signUpAndIn(b, "typist@example.com");
    const listCsrf = b.csrfOf((await b.get("/notes")).text);
    const plain = (await b.post("/notes/new", { _csrf: listCsrf, format: "plain" })).location;
    const rich = (await b.post("/notes/new", { _csrf: listCsrf, format: "rich" })).location;
    const csrf = b.csrfOf((await b.get(plain)).text);
    const save = (path: string, body: unknown) => h.request("POST", `${path}/save`, { headers: { cookie: cookieOf(b), "x-csrf-token": csrf, origin: ORIGIN }, body });
    const cases: [string, unknown, string][] = [
      [rich, { title: ["a"] }, "title"],
      [rich, { html: { a: 1 } }, "html"],
      [rich, { html: ["<p>a</p>"] }, "html"],
      [plain, { title: ["a"] }, "title"],
      [plain, { plain_body: { a: 1 } }, "plain_body"],
      [plain, { plain_body: 5 }, "plain_body"],
      [plain, ["a"], "body"],
      [plain, { title: "a".repeat(401) }, "title"],
    ];
    for (const [path, body, field] of cases) {
      const r = await save(path, body);
      const json = await r.json();
      expect({ body, status: r.status, code: json.error?.code }).toEqual({ body, status: 422, code: "validation_failed" });
      expect(json.error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    // A form post with a field given twice goes back to the note with the message.
    const twice = await h.request("POST", `${plain}/save`, {
      headers: { cookie: cookieOf(b), origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams([["_csrf", csrf], ["title", "a"], ["title", "b"], ["plain_body", "x"]]).toString(),
    });
    expect(twice.status).toBe(303);
    expect(twice.headers.get("location")).toContain("error=");
    expect(await h.deps.db.selectDistinct({ title: notes.title }).from(notes)).toEqual([{ title: "Untitled" }]);
    // Strings still save.
    expect((await save(rich, { title: "Fine", html: "<p>ok</p>" })).status).toBe(200);
    expect((await save(plain, { title: "Fine", plain_body: "ok" })).status).toBe(200);
  });
});

describe("credentials after a takeover", () => {
  test("an e-mail change needs the current password, and refused attempts count against its limit", async () => {
    const b = new Browser();
    await signUpAndIn(b, "careful@example.com");
    const settings = (await b.get("/settings")).text;
    expect(settings).toMatch(/<form method="post" action="\/settings\/email"[^]*?type="password" name="password"/);
    const csrf = b.csrfOf(settings);
    const change = (email: string, password?: string) => b.post("/settings/email", { _csrf: csrf, email, ...(password === undefined ? {} : { password }) });
    expect((await change("n1@example.com")).status).toBe(422);
    expect((await change("n2@example.com", "Wrong1!pass")).status).toBe(422);
    expect(decodeURIComponent((await change("n3@example.com", "Str0ng!pass")).location)).toContain("ok=");
    // Three a day per account, the refused ones included.
    const limited = await change("n4@example.com", "Str0ng!pass");
    expect(limited.status).toBe(429);
    expect(limited.text).toContain("Too many attempts");
    await h.jobs.drain();
    expect(sent.filter((m) => m.subject.includes("new e-mail")).map((m) => m.to)).toEqual(["n3@example.com"]);
  });

  test("confirming an e-mail change signs the account's other browsers out", async () => {
    const mine = new Browser("198.51.100.140");
    await signUpAndIn(mine, "moving@example.com");
    const other = new Browser("198.51.100.141");
    expect((await other.submit("/signin", "/signin", { email: "moving@example.com", password: "Str0ng!pass" })).location).toBe("/notes");
    expect((await other.get("/settings")).status).toBe(200);
    await mine.post("/settings/email", { _csrf: mine.csrfOf((await mine.get("/settings")).text), email: "moved@example.com", password: "Str0ng!pass" });
    await h.jobs.drain();
    await mine.get(/(\/settings\/email\/confirm\?token=\w+)/.exec(sent.find((m) => m.to === "moved@example.com")!.text)![1]!);
    expect((await other.get("/settings")).headers.get("location")).toStartWith("/signin");
    const still = await mine.get("/settings");
    expect(still.status).toBe(200);
    expect(still.text).toContain("moved@example.com");
  });

  test("after a password reset, one click revokes every API token and AI-client grant", async () => {
    await signUpAndIn(new Browser("198.51.100.150"), "taken-over@example.com");
    const ids = await idsOf("taken-over@example.com");
    await setPlan(ids.workspaceId, "dev");
    const apiToken = await h.token(ids, ["read", "write"]);
    const grant = await h.deps.writer.write(async () => {
      await h.deps.db.insert(oauthClients).values({ clientId: "client_x", clientName: "Agent", redirectUris: "[]", metadata: "{}", createdAt: h.clock.now() });
      return issueTokens(h.deps, { clientId: "client_x", ...ids, scope: "notes:read notes:write" });
    });
    expect((await h.request("GET", "/api/v1/notes", { token: apiToken })).status).toBe(200);
    expect(await mcpStatus(grant.access_token)).toBe(200);

    const owner = new Browser("198.51.100.151");
    await owner.submit("/reset", "/reset", { email: "taken-over@example.com" });
    await h.jobs.drain();
    const token = /token=(\w+)/.exec(sent.find((m) => m.subject.includes("reset"))!.text)![1]!;
    const done = await owner.submit(`/reset/confirm?token=${token}`, "/reset/confirm", { token, password: "N3w!password" });
    const page = await owner.get(done.location);
    expect(page.text).toContain("Your password is changed");
    expect(page.text).toContain('<form method="post" action="/settings/access/revoke">');
    const revoked = await owner.post("/settings/access/revoke", { _csrf: owner.csrfOf(page.text) });
    expect(revoked.status).toBe(303);
    expect(decodeURIComponent(revoked.location)).toContain("ok=");

    expect((await h.request("GET", "/api/v1/notes", { token: apiToken })).status).toBe(401);
    expect(await mcpStatus(grant.access_token)).toBe(401);
    const refresh = await h.request("POST", "/oauth/token", {
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: grant.refresh_token, client_id: "client_x" }).toString(),
    });
    expect(refresh.status).toBe(400);
    // The offer needs the session's CSRF token like every other form.
    expect((await new Browser("198.51.100.152").post("/settings/access/revoke", {})).status).toBe(403);
  });

  test("only tokens with the write scope see a stream's webhook secret, over REST and MCP", async () => {
    const a = await h.account("dev");
    const writer = await h.token(a, ["read", "write"]);
    const note = await (await h.request("POST", "/api/v1/notes/by-filename/hooked.log/append", { token: writer, body: { text: "x" } })).json();
    await h.deps.db
      .update(notes)
      .set({ webhookUrl: "https://hooks.example.com/x", webhookStatus: "enabled", webhookSecret: "whsec_c2VjcmV0" })
      .where(eq(notes.id, note.id));
    const reader = await h.token(a, ["read"]);
    const pinnedReader = await h.token(a, ["read", "append"], { noteId: note.id });
    for (const token of [reader, pinnedReader]) {
      const one = await (await h.request("GET", `/api/v1/notes/${note.id}`, { token })).json();
      expect(one).toMatchObject({ webhook_url: "https://hooks.example.com/x", webhook_secret: null });
      expect((await (await h.request("GET", "/api/v1/notes/by-filename/hooked.log", { token })).json()).webhook_secret).toBeNull();
      expect((await (await h.request("GET", "/api/v1/notes", { token })).json())[0].webhook_secret).toBeNull();
    }
    expect((await (await h.request("GET", `/api/v1/notes/${note.id}`, { token: writer })).json()).webhook_secret).toBe("whsec_c2VjcmV0");

    const readAgent = await mcpClient(reader);
    const writeAgent = await mcpClient(writer);
    try {
      const read = (await readAgent.callTool({ name: "read_note", arguments: { id: note.id } })) as { content: { text: string }[] };
      expect(JSON.parse(read.content[0]!.text).webhook_secret).toBeNull();
      const written = (await writeAgent.callTool({ name: "read_note", arguments: { id: note.id } })) as { content: { text: string }[] };
      expect(JSON.parse(written.content[0]!.text).webhook_secret).toBe("whsec_c2VjcmV0");
    } finally {
      await readAgent.close();
      await writeAgent.close();
    }
  });
});

describe("forms keep what was typed and say what is wrong beside the field", () => {
  test("the forms give the browser the service's own length limits", async () => {
    const b = new Browser("198.51.100.211");
    const signup = (await b.get("/signup")).text;
    expect(inputNamed(signup, "name")).toContain(`maxlength="${NAME_MAX_CHARS}"`);
    expect(inputNamed(signup, "password")).toContain(`minlength="${PASSWORD_MIN_CHARS}" maxlength="${PASSWORD_MAX_CHARS}"`);
    await signUpAndIn(b, "limits@example.com");
    const settings = (await b.get("/settings")).text;
    expect(inputNamed(settings, "name")).toContain(`maxlength="${NAME_MAX_CHARS}"`);
    expect(inputNamed(settings, "bio")).toContain(`maxlength="${BIO_MAX_CHARS}"`);
    expect(inputNamed(settings, "new_password")).toContain(`minlength="${PASSWORD_MIN_CHARS}" maxlength="${PASSWORD_MAX_CHARS}"`);
    expect(inputNamed((await b.get("/notes/new")).text, "title")).toContain(`maxlength="${TITLE_MAX_CHARS}"`);
    expect(inputNamed((await b.get("/notes")).text, "name")).toContain(`maxlength="${FOLDER_NAME_MAX_CHARS}"`);
  });

  test("a refused sign-up shows the form again with the values typed, never the password, each message beside its field", async () => {
    const b = new Browser("198.51.100.210");
    const r = await b.submit("/signup", "/signup", { email: "a@b", name: "Dana Scully", password: "weak", age_confirmed: "yes" });
    expect(r.status).toBe(422);
    expect(r.headers.get("content-type")).toContain("text/html");
    expect(inputNamed(r.text, "email")).toContain('value="a@b"');
    expect(inputNamed(r.text, "name")).toContain('value="Dana Scully"');
    expect(inputNamed(r.text, "age_confirmed")).toContain("checked");
    expect(inputNamed(r.text, "password")).not.toContain("value=");
    expect(r.text).not.toContain("weak");
    expect(fieldMessage(r.text, "email")).toEqual({ invalid: true, message: "Enter a valid e-mail address." });
    expect(fieldMessage(r.text, "password")).toEqual({ invalid: true, message: "Password must be 8 to 128 characters." });
    expect(fieldMessage(r.text, "birth_date")).toEqual({ invalid: false, message: null });
    // The form is there to send again: its CSRF token and action.
    expect(r.text).toContain('<form method="post" action="/signup"');
    expect(b.csrfOf(r.text)).not.toBe("");

    const young = await b.submit("/signup", "/signup", { email: "young@example.com", password: "Str0ng!pass", birth_date: "2020-02-02" });
    expect(inputNamed(young.text, "birth_date")).toContain('value="2020-02-02"');
    expect(fieldMessage(young.text, "birth_date")).toEqual({ invalid: true, message: "You must be 16 or older to use notestream." });
    expect(fieldMessage(young.text, "email").invalid).toBe(false);
  });

  test("a wrong password shows the sign-in form again with the e-mail kept and the message at the top of the form", async () => {
    await signUpAndIn(new Browser("198.51.100.211"), "kept@example.com");
    const b = new Browser("198.51.100.212");
    const r = await b.submit("/signin?next=%2Fsettings", "/signin", { email: "kept@example.com", password: "Wrong1!pass", next: "/settings" });
    expect(r.status).toBe(400);
    expect(inputNamed(r.text, "email")).toContain('value="kept@example.com"');
    expect(inputNamed(r.text, "password")).not.toContain("value=");
    expect(inputNamed(r.text, "next")).toContain('value="/settings"');
    expect(r.text).toMatch(/<form method="post" action="\/signin"[^>]*>[^]*role="alert"[^>]*>That e-mail address and password don&#39;t match an account\./);
    // The kept next= still leads there.
    const again = await b.post("/signin", { _csrf: b.csrfOf(r.text), email: "kept@example.com", password: "Str0ng!pass", next: "/settings" });
    expect(again.location).toBe("/settings");
  });

  test("too many sign-ins keep the form too, with how long to wait, and answer 429", async () => {
    const b = new Browser("192.0.2.150");
    for (let i = 0; i < 10; i++) await b.submit("/signin", "/signin", { email: `n${i}@example.com`, password: "Wrong1!pass" });
    const r = await b.submit("/signin", "/signin", { email: "late@example.com", password: "Wrong1!pass" });
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toBeTruthy();
    expect(inputNamed(r.text, "email")).toContain('value="late@example.com"');
    expect(r.text).toMatch(/role="alert"[^>]*>Too many attempts\. Please wait \d+ seconds/);
  }, 30_000);

  test("an unconfirmed account's sign-in offers a resend form right there, prefilled, with a neutral answer", async () => {
    const b = new Browser("198.51.100.213");
    await b.submit("/signup", "/signup", { email: "slow@example.com", password: "Str0ng!pass", age_confirmed: "yes" });
    const r = await b.submit("/signin", "/signin", { email: "slow@example.com", password: "Str0ng!pass" });
    expect(r.status).toBe(400);
    expect(r.text).toContain("ask for a new one below");
    const resend = /<form method="post" action="\/confirm\/resend"[^]*?<\/form>/.exec(r.text)?.[0] ?? "";
    expect(inputNamed(resend, "email")).toContain('value="slow@example.com"');
    const sentAgain = await b.post("/confirm/resend", { _csrf: b.csrfOf(resend), email: "slow@example.com" });
    expect(sentAgain.status).toBe(303);
    expect(decodeURIComponent(sentAgain.location)).toContain("If that address has an unconfirmed account, a new link is on its way.");
    await h.jobs.drain();
    expect(sent.filter((m) => m.to === "slow@example.com" && m.subject.includes("confirm")).length).toBe(2);
    // The new link works.
    await b.get(/(\/confirm\?token=\w+)/.exec(sent.at(-1)!.text)![1]!);
    expect((await b.submit("/signin", "/signin", { email: "slow@example.com", password: "Str0ng!pass" })).location).toBe("/onboarding");
  });

  test("the reset pages keep their input: a weak new password is refused beside the field, the link kept", async () => {
    await signUpAndIn(new Browser("198.51.100.214"), "resetter@example.com");
    const b = new Browser("198.51.100.215");
    await b.submit("/reset", "/reset", { email: "resetter@example.com" });
    await h.jobs.drain();
    const token = /token=(\w+)/.exec(sent.find((m) => m.subject.includes("reset"))!.text)![1]!;
    const weak = await b.submit(`/reset/confirm?token=${token}`, "/reset/confirm", { token, password: "NoSymbol123" });
    expect(weak.status).toBe(422);
    expect(inputNamed(weak.text, "token")).toContain(`value="${token}"`);
    expect(fieldMessage(weak.text, "password")).toEqual({ invalid: true, message: expect.stringContaining("needs a symbol") });
    // The link was not used up by the refusal.
    const done = await b.post("/reset/confirm", { _csrf: b.csrfOf(weak.text), token, password: "N3w-password" });
    expect(decodeURIComponent(done.location)).toContain("Your password is changed");

    const used = await b.submit(`/reset/confirm?token=${token}`, "/reset/confirm", { token, password: "An0ther-pass" });
    expect(used.status).toBe(400);
    expect(used.text).toMatch(/role="alert"[^>]*>[^<]*not valid any more/);
    expect(used.text).toContain('href="/reset"');

    // Past the per-address limit, the request form comes back with the address kept.
    const c = new Browser("198.51.100.216");
    for (let i = 0; i < 5; i++) await c.submit("/reset", "/reset", { email: `r${i}@example.com` });
    const limited = await c.submit("/reset", "/reset", { email: "r9@example.com" });
    expect(limited.status).toBe(429);
    expect(inputNamed(limited.text, "email")).toContain('value="r9@example.com"');
  });

  test("every form that sets a password says the rule", async () => {
    const b = new Browser("198.51.100.217");
    await signUpAndIn(b, "rules@example.com");
    for (const path of ["/signup", "/reset/confirm?token=x", "/settings"]) {
      expect({ path, says: (await b.get(path)).text.includes(PASSWORD_RULE) }).toEqual({ path, says: true });
    }
  });

  test("the account page's forms keep their input and say what is wrong beside the field", async () => {
    const b = new Browser("198.51.100.218");
    await signUpAndIn(b, "settled@example.com");
    const csrf = b.csrfOf((await b.get("/settings")).text);

    const profile = await b.post("/settings/profile", { _csrf: csrf, name: "n".repeat(81), bio: "my bio\nline two" });
    expect(profile.status).toBe(422);
    expect(inputNamed(profile.text, "name")).toContain(`value="${"n".repeat(81)}"`);
    expect(profile.text).toContain(">my bio\nline two</textarea>");
    expect(fieldMessage(profile.text, "name")).toEqual({ invalid: true, message: "Your name can be at most 80 characters." });

    const email = await b.post("/settings/email", { _csrf: csrf, email: "wanted@example.com", password: "Wrong1!pass" });
    expect(email.status).toBe(422);
    expect(/<form method="post" action="\/settings\/email"[^]*?<\/form>/.exec(email.text)?.[0]).toContain('value="wanted@example.com"');
    expect(fieldMessage(email.text, "password")).toEqual({ invalid: true, message: expect.stringContaining("that was not it") });

    const wrongCurrent = await b.post("/settings/password", { _csrf: csrf, current_password: "Wrong1!pass", new_password: "N3w-password" });
    expect(wrongCurrent.status).toBe(422);
    expect(fieldMessage(wrongCurrent.text, "current_password")).toEqual({ invalid: true, message: expect.stringContaining("not your current password") });
    expect(wrongCurrent.text).not.toContain("N3w-password");
    const weak = await b.post("/settings/password", { _csrf: csrf, current_password: "Str0ng!pass", new_password: "lowercase1-" });
    expect(weak.status).toBe(422);
    expect(fieldMessage(weak.text, "new_password")).toEqual({ invalid: true, message: "Password needs an uppercase letter." });
    expect(fieldMessage(weak.text, "current_password").invalid).toBe(false);
  });
});

/** The page's own content, without the header's links. */
const mainOf = (page: string) => /<main\b[^>]*>([^]*)<\/main>/.exec(page)?.[1] ?? "";

describe("pages for the browser's errors", () => {
  test("an unknown page is a 404 page in the layout with a way back; the API and other clients keep the JSON envelope", async () => {
    const anon = new Browser("198.51.100.220");
    const missing = await anon.get("/nope");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toContain("text/html");
    expect(missing.text).toContain('<header class="top">');
    expect(mainOf(missing.text)).toMatch(/<h1>[^<]*not found/i);
    expect(mainOf(missing.text)).toContain('href="/"');

    const signedIn = new Browser("198.51.100.221");
    await signUpAndIn(signedIn, "lost@example.com");
    const mine = await signedIn.get("/settings/nope");
    expect(mine.status).toBe(404);
    expect(mainOf(mine.text)).toContain('href="/notes"');
    expect(mine.text).toContain("lost@example.com");

    const json = await h.request("GET", "/nope", { headers: { accept: "application/json" } });
    expect(json.status).toBe(404);
    expect((await errorOf(json)).code).toBe("not_found");
    const token = await h.token(await h.account("dev"));
    for (const path of ["/api/v1/nope", "/api/v1/notes/note_nope"]) {
      const api = await h.request("GET", path, { token, headers: { accept: "text/html" } });
      expect({ path, status: api.status, type: api.headers.get("content-type") }).toEqual({ path, status: 404, type: "application/json; charset=utf-8" });
    }
    const oauth = await h.request("POST", "/oauth/token", { headers: { accept: "text/html", "content-type": "application/x-www-form-urlencoded" }, body: "grant_type=nope" });
    expect(oauth.headers.get("content-type")).toContain("application/json");
  });

  test("a form post without its CSRF token is a 403 page with a way back", async () => {
    const b = new Browser("198.51.100.222");
    await signUpAndIn(b, "forged@example.com");
    const r = await b.post("/notes/new", { format: "plain" });
    expect(r.status).toBe(403);
    expect(r.headers.get("content-type")).toContain("text/html");
    expect(r.text).toContain('<header class="top">');
    expect(mainOf(r.text)).toContain("This form has expired or did not come from notestream");
    expect(mainOf(r.text)).toContain('href="/notes"');
    // Signed out, the sign-in form's refusal is a page as well.
    const outsider = await new Browser("198.51.100.223").post("/signin", { email: "forged@example.com", password: "x" });
    expect(outsider.status).toBe(403);
    expect(mainOf(outsider.text)).toContain('href="/signin"');
  });

  test("an unexpected failure on a page is a 500 page without the details; the API's stays in the envelope", async () => {
    const b = new Browser("198.51.100.224");
    await signUpAndIn(b, "broken@example.com");
    const ids = await idsOf("broken@example.com");
    await setPlan(ids.workspaceId, "dev");
    const token = await h.token(ids);
    // A database in a state no code expects: the account page reads the API error log.
    await sqlRun(h.deps.store, sql`DROP TABLE api_errors`);
    const errors = spyOn(console, "error").mockImplementation(() => {});
    try {
      const r = await b.get("/settings");
      expect(r.status).toBe(500);
      expect(r.headers.get("content-type")).toContain("text/html");
      expect(r.text).toContain('<header class="top">');
      expect(mainOf(r.text)).toContain("Something went wrong on our side");
      expect(mainOf(r.text)).toContain('href="/notes"');
      expect(r.text).not.toMatch(/api_errors|SQLite|at \//);
      expect(errors).toHaveBeenCalled();
      const api = await h.request("GET", "/api/v1/errors", { token });
      expect(api.status).toBe(500);
      expect((await errorOf(api)).code).toBe("internal_error");
    } finally {
      errors.mockRestore();
    }
  });

  test("a favicon, as SVG and as ICO, linked from every page", async () => {
    const svg = await h.request("GET", "/favicon.svg");
    expect(svg.status).toBe(200);
    expect(svg.headers.get("content-type")).toBe("image/svg+xml");
    expect(await svg.text()).toStartWith("<svg");
    const ico = await h.request("GET", "/favicon.ico");
    expect(ico.status).toBe(200);
    expect(ico.headers.get("content-type")).toBe("image/x-icon");
    const bytes = new Uint8Array(await ico.arrayBuffer());
    // ICONDIR (reserved 0, type 1 = icon, one image), then the image: a PNG.
    expect([...bytes.slice(0, 6)]).toEqual([0, 0, 1, 0, 1, 0]);
    const offset = new DataView(bytes.buffer).getUint32(18, true);
    expect([...bytes.slice(offset, offset + 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect((await new Browser().get("/signin")).text).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml">');
  });
});
