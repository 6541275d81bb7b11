import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { harness, type Harness } from "../helpers/harness";

let h: Harness;
let sent: { to: string; subject: string; text: string }[];
beforeEach(() => {
  h = harness();
  sent = [];
  h.deps.mailer = { send: async (m) => void sent.push(m) };
});
afterEach(() => h.close());

const ORIGIN = "http://notestream.test";

/** A tiny browser: keeps cookies, reads CSRF tokens off pages, posts forms. */
class Browser {
  cookies = new Map<string, string>();
  constructor(private ip = "198.51.100.7") {}
  private cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
  private keep(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const [k, v] = pair!.split("=");
      this.cookies.set(k!, v ?? "");
    }
  }
  async get(path: string) {
    const res = await h.request("GET", path, { headers: { cookie: this.cookieHeader() }, ip: this.ip });
    this.keep(res as unknown as Response);
    return { status: res.status, headers: res.headers, text: await res.text() };
  }
  csrfOf(page: string) {
    return /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? /name="csrf" content="([^"]+)"/.exec(page)?.[1] ?? "";
  }
  async post(path: string, fields: Record<string, string>, opts: { origin?: string | null } = {}) {
    const headers: Record<string, string> = { cookie: this.cookieHeader(), "content-type": "application/x-www-form-urlencoded" };
    if (opts.origin !== null) headers.origin = opts.origin ?? ORIGIN;
    const res = await h.request("POST", path, { headers, body: new URLSearchParams(fields).toString(), ip: this.ip });
    this.keep(res as unknown as Response);
    return { status: res.status, location: res.headers.get("location") ?? "", text: await res.text() };
  }
  /** Fetches the form page for its CSRF token, then posts. */
  async submit(formPage: string, action: string, fields: Record<string, string>) {
    const csrf = this.csrfOf((await this.get(formPage)).text);
    return this.post(action, { _csrf: csrf, ...fields });
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
  expect(signedIn.location).toBe("/notes");
}

describe("sign-up checks", () => {
  test("password rules, age and disposable domains are refused with a clear message", async () => {
    let n = 0;
    const cases: [Record<string, string>, RegExp][] = [
      [{ email: "a@example.com", password: "short1!", age_confirmed: "yes" }, /8 to 128 characters/],
      [{ email: "a@example.com", password: "alllower1!", age_confirmed: "yes" }, /uppercase letter/],
      [{ email: "a@example.com", password: "NoDigits!!", age_confirmed: "yes" }, /digit/],
      [{ email: "a@example.com", password: "NoSpecial12", age_confirmed: "yes" }, /one of/],
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
    expect(h.deps.db.$client.query("SELECT count(*) AS n FROM accounts").get()).toEqual({ n: 0 });
  });

  test("sign-up: the 6th attempt in an hour from one address answers 429", async () => {
    const b = new Browser("198.51.100.200");
    for (let i = 0; i < 5; i++) await b.submit("/signup", "/signup", { email: `x${i}@example.com`, password: "weak" });
    const r = await b.submit("/signup", "/signup", { email: "y@example.com", password: "Str0ng!pass", age_confirmed: "yes" });
    expect(r.status).toBe(429);
    expect(r.text).toContain("Too many attempts");
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
    expect((await b.submit("/signin", "/signin", { email: "new@example.com", password: "Str0ng!pass" })).location).toBe("/notes");
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
    await b.post("/settings/email", { _csrf: csrf, email: "new@example.com" });
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
    const stored = h.deps.db.$client.query("SELECT rich_html, body, format FROM notes WHERE id = ?").get(path.split("/")[2]!) as { rich_html: string; body: string; format: string };
    expect(stored.format).toBe("rich");
    expect(stored.rich_html).not.toMatch(/script|onerror|javascript:|<img/i);
    expect(stored.rich_html).toContain("<strong>it</strong>");
    expect(stored.body).toBe("Q3\nShip it & celebrate\n- one\n- two\n");

    // The API (during a trial, which opens it) reads the plain projection and may not write.
    h.deps.db.$client.run("UPDATE workspaces SET state = 'trial', trial_ends_at = ?", [h.clock.now() + 86_400_000]);
    const account = h.deps.db.$client.query("SELECT id FROM accounts WHERE email = 'writer@example.com'").get() as { id: string };
    const ws = h.deps.db.$client.query("SELECT id FROM workspaces WHERE owner_id = ?").get(account.id) as { id: string };
    const token = await h.token({ accountId: account.id, workspaceId: ws.id });
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
