/**
 * The settings forms over HTTP (tokens, a stream's webhook, inbox, retention and alert): what
 * creates or rotates answers with a redirect and shows its secret once through a sealed, path-scoped
 * cookie; refused input comes back in place with browser wording; the dead-man's switch follows the
 * plan; test deliveries and test alerts go through the normal paths; delivery errors read as words.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { and, count, eq, type SQL } from "drizzle-orm";
import { accounts, jobs, notes, sessions, tokens, webhookAttempts } from "../../src/db/tables";
import { sha256Hex } from "../../src/lib/secrets";
import type { PlanName } from "../../src/limits/plans";
import { createSession } from "../../src/web/session";
import { FakeClock, harness, type Harness } from "../helpers/harness";
import { receiver } from "../helpers/receiver";

let h: Harness;
let other: Harness | undefined;
let r: ReturnType<typeof receiver> | undefined;
let sent: { to: string; subject: string; text: string }[];

afterEach(async () => {
  r?.stop();
  r = undefined;
  await other?.stop();
  other = undefined;
  await h.close();
});

async function start(env: Record<string, string> = {}) {
  // Real time: receivers verify signature timestamps against their own clock.
  h = await harness({ env: { NOTESTREAM_WEBHOOK_TIMEOUT_MS: "1000", ...env }, clock: new FakeClock(Date.now()) });
  sent = [];
  h.deps.mailer = { send: async (m) => void sent.push(m) };
}

const ORIGIN = "http://notestream.test";

interface Cookie {
  value: string;
  path: string;
}

/** A browser that keeps cookies by name and path, sends those whose path matches, and posts forms with the session's CSRF token. */
class Browser {
  cookies = new Map<string, Cookie>();
  constructor(
    private app: () => Harness,
    session: string,
    private csrf: string,
  ) {
    this.cookies.set("ns_session|/", { value: session, path: "/" });
  }
  private header(path: string): string {
    return [...this.cookies]
      .filter(([, c]) => path === c.path || path.startsWith(c.path.endsWith("/") ? c.path : `${c.path}/`))
      .map(([k, c]) => `${k.split("|")[0]}=${c.value}`)
      .join("; ");
  }
  private keep(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(";").map((x) => x.trim());
      const [name, value] = pair!.split("=");
      const path = attrs.find((a) => a.toLowerCase().startsWith("path="))?.slice(5) ?? "/";
      if (/max-age=0\b/i.test(c)) this.cookies.delete(`${name}|${path}`);
      else this.cookies.set(`${name}|${path}`, { value: value ?? "", path });
    }
  }
  async get(path: string) {
    const res = (await this.app().request("GET", path, { headers: { cookie: this.header(path) } })) as unknown as Response;
    this.keep(res);
    return { status: res.status, headers: res.headers, text: await res.text() };
  }
  async post(path: string, fields: Record<string, string | string[]>) {
    const body = new URLSearchParams({ _csrf: this.csrf });
    for (const [k, v] of Object.entries(fields)) for (const one of ([] as string[]).concat(v)) body.append(k, one);
    const res = (await this.app().request("POST", path, {
      headers: { cookie: this.header(path), "content-type": "application/x-www-form-urlencoded", origin: ORIGIN },
      body: body.toString(),
    })) as unknown as Response;
    this.keep(res);
    return { status: res.status, headers: res.headers, location: res.headers.get("location") ?? "", text: await res.text() };
  }
}

async function signedIn(plan: PlanName) {
  const a = await h.account(plan);
  const [account] = await h.deps.db.select().from(accounts).where(eq(accounts.id, a.accountId));
  const { secret } = await createSession(h.deps, account!);
  const [{ csrf }] = (await h.deps.db.select({ csrf: sessions.csrfToken }).from(sessions).where(eq(sessions.idHash, sha256Hex(secret)))) as [{ csrf: string }];
  const b = new Browser(() => h, secret, csrf);
  return { ...a, b, session: secret };
}

/** A stream made through the API by a Dev account (or written in the database for a plan without the API). */
async function stream(a: { accountId: string; workspaceId: string }, filename: string): Promise<string> {
  const token = await h.token(a, ["read", "write"]);
  const res = await h.request("POST", `/api/v1/notes/by-filename/${filename}/append`, { token, body: { text: "first line" } });
  expect(res.status).toBe(201);
  return (await res.json()).id;
}

const noteRow = async (id: string) => (await h.deps.db.select().from(notes).where(eq(notes.id, id)))[0]!;

/** How many tokens match. */
const tokenCount = async (where: SQL | undefined) => (await h.deps.db.select({ n: count() }).from(tokens).where(where))[0];

describe("creating and rotating answer with a redirect; the secret is shown once", () => {
  test("minting a token: 303 to the tokens page, the secret in a sealed cookie scoped to that page, shown once, never in the URL", async () => {
    await start();
    const { b, workspaceId } = await signedIn("dev");
    const res = await b.post("/settings/tokens", { name: "laptop", scope: ["read", "write"], expires_in_days: "30" });
    expect(res.status).toBe(303);
    expect(res.location).toBe("/settings/tokens");
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("ns_flash="))!;
    expect(cookie).toContain("Path=/settings/tokens");
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toMatch(/Max-Age=\d+/);
    expect(cookie).not.toContain("nst_");
    expect(await tokenCount(eq(tokens.name, "laptop"))).toEqual({ n: 1 });

    const shown = await b.get("/settings/tokens");
    expect(shown.status).toBe(200);
    const secret = /id="new-token" value="(nst_\w+)"/.exec(shown.text)?.[1];
    expect(secret).toMatch(/^nst_[0-9A-Za-z]{40}$/);
    expect(shown.text).toContain("Token “laptop” created.");
    expect(shown.headers.getSetCookie().some((c) => c.startsWith("ns_flash=;") && /Max-Age=0/.test(c) && c.includes("Path=/settings/tokens"))).toBe(true);
    expect((await h.request("GET", "/api/v1/notes", { token: secret! })).status).toBe(200);

    const again = await b.get("/settings/tokens");
    expect(again.text).not.toContain("nst_");
    expect(again.text).not.toContain("created.");
    expect(await tokenCount(and(eq(tokens.workspaceId, workspaceId), eq(tokens.name, "laptop")))).toEqual({ n: 1 });
  });

  test("the flash opens on another instance of the service over the same database, but not for another session", async () => {
    await start();
    const me = await signedIn("dev");
    const res = await me.b.post("/settings/tokens", { name: "ci", scope: "append" });
    const flash = res.headers.getSetCookie().find((c) => c.startsWith("ns_flash="))!.split(";")[0]!;

    // A second process on the same data: the flash holds everything the page needs.
    other = await harness({ dataDir: h.dataDir, clock: h.clock });
    const onOther = await other.request("GET", "/settings/tokens", { headers: { cookie: `ns_session=${me.session}; ${flash}` } });
    expect(await onOther.text()).toMatch(/id="new-token" value="nst_\w{40}"/);

    // Another session of the same account (another browser) cannot open it.
    const [account] = await h.deps.db.select().from(accounts).where(eq(accounts.id, me.accountId));
    const { secret } = await createSession(h.deps, account!);
    const elsewhere = await h.request("GET", "/settings/tokens", { headers: { cookie: `ns_session=${secret}; ${flash}` } });
    expect(await elsewhere.text()).not.toContain("nst_");
  });

  test("rotating the inbox: 303 to the settings page, the URL shown once; reloading rotates nothing", async () => {
    await start();
    const a = await signedIn("dev");
    const id = await stream(a, "hooks.log");
    const res = await a.b.post(`/notes/${id}/inbox/rotate`, {});
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/notes/${id}/settings`);
    const hash = (await noteRow(id)).inboxTokenHash;
    const shown = await a.b.get(`/notes/${id}/settings`);
    const url = /id="inbox-url" value="([^"]+)"/.exec(shown.text)![1]!;
    expect(url).toMatch(/\/h\/inb_\w{32}$/);
    const again = await a.b.get(`/notes/${id}/settings`);
    expect(again.text).not.toContain("inb_");
    expect((await noteRow(id)).inboxTokenHash).toBe(hash);
    expect((await h.request("POST", new URL(url).pathname, { body: "a line" })).status).toBe(202);
  });
});

describe("refused input comes back in place", () => {
  test("a loopback webhook URL or an unknown format: 422, the page again with what was typed and browser wording beside the field", async () => {
    await start();
    const a = await signedIn("dev");
    const id = await stream(a, "deploys.log");
    const res = await a.b.post(`/notes/${id}/webhook`, { webhook_url: "http://127.0.0.1:9000/hook", webhook_format: "slack" });
    expect(res.status).toBe(422);
    expect(res.text).toContain('value="http://127.0.0.1:9000/hook"');
    expect(res.text).toMatch(/<option value="slack" selected>/);
    expect(res.text).toMatch(/name="webhook_url"[^>]*aria-invalid="true" aria-describedby="webhook-webhook_url-error"/);
    const message = /id="webhook-webhook_url-error">([^<]+)</.exec(res.text)![1]!;
    expect(message).toContain("which notestream does not call by default");
    expect(message).toContain("NOTESTREAM_WEBHOOK_ALLOW_CIDRS");
    expect(res.text).not.toContain("webhook_url points at");
    expect((await noteRow(id)).webhookUrl).toBeNull();

    const format = await a.b.post(`/notes/${id}/webhook`, { webhook_url: "https://hooks.example.com/x", webhook_format: "irc" });
    expect(format.status).toBe(422);
    expect(format.text).toContain('value="https://hooks.example.com/x"');
    expect(/id="webhook-webhook_format-error">([^<]+)</.exec(format.text)![1]).toBe("Choose one of the formats in the list.");
    expect((await noteRow(id)).webhookUrl).toBeNull();
    expect((await noteRow(id)).webhookFormat).toBe("generic");
  });

  test("the token form: a long name, no scope and a bad expiry are each said beside their field; the plan's cap above the form", async () => {
    await start();
    const a = await signedIn("dev");
    const long = "n".repeat(81);
    const res = await a.b.post("/settings/tokens", { name: long, expires_in_days: "400" });
    expect(res.status).toBe(422);
    expect(res.text).toContain(`value="${long}"`);
    expect(res.text).toContain('value="400"');
    expect(/id="token-name-error">([^<]+)</.exec(res.text)![1]).toBe("A name of at most 80 characters.");
    expect(/id="token-scope-error">([^<]+)</.exec(res.text)![1]).toBe("Choose at least one scope.");
    expect(/id="token-expires_in_days-error">([^<]+)</.exec(res.text)![1]).toBe("Enter a whole number of days from 1 to 365.");
    // The scope boxes come back as they were sent (none), not as the default.
    expect(res.text).not.toMatch(/value="append" checked/);
    expect(await tokenCount(eq(tokens.workspaceId, a.workspaceId))).toEqual({ n: 0 });

    for (const name of ["one", "two", "three"]) expect((await a.b.post("/settings/tokens", { name, scope: "read" })).status).toBe(303);
    const full = await a.b.post("/settings/tokens", { name: "four", scope: ["read", "append"] });
    expect(full.status).toBe(403);
    expect(full.text).toContain("Your plan allows 3 active API tokens and 3 are active: revoke one below to make room.");
    expect(full.text).toContain('value="four"');
    expect(full.text).toMatch(/value="append" checked/);
  });

  test("the dead-man form: each problem beside its field, the values kept; a retention number out of range likewise", async () => {
    await start({ NOTESTREAM_MIN_INTERVAL_SECONDS: "60" });
    const a = await signedIn("dev");
    const id = await stream(a, "nightly.log");
    const tooLong = await a.b.post(`/notes/${id}/deadman`, { every: "9000", unit: "hours", alert_email: "ops@example.com" });
    expect(tooLong.status).toBe(422);
    expect(/id="deadman-every-error">([^<]+)</.exec(tooLong.text)![1]).toBe("Choose an interval from 1 minute to 366 days.");
    expect(tooLong.text).toContain('value="9000"');
    expect(tooLong.text).toContain('value="ops@example.com"');
    const bad = await a.b.post(`/notes/${id}/deadman`, { every: "twelve", unit: "fortnights", alert_email: "not an address" });
    expect(bad.status).toBe(422);
    expect(/id="deadman-every-error">([^<]+)</.exec(bad.text)![1]).toContain("a number of hours or minutes");
    expect(/id="deadman-unit-error">([^<]+)</.exec(bad.text)![1]).toBe("Choose hours or minutes.");
    const email = await a.b.post(`/notes/${id}/deadman`, { every: "2", unit: "hours", alert_email: "not an address" });
    expect(/id="deadman-alert_email-error">([^<]+)</.exec(email.text)![1]).toContain("Enter an e-mail address");
    expect(email.text).toContain('value="not an address"');
    expect((await noteRow(id)).expectedIntervalSeconds).toBeNull();

    // The signals' settings: how long a run may take, and alerts to the webhook too.
    const run = await a.b.post(`/notes/${id}/deadman`, { every: "2", unit: "hours", max_run_minutes: "-5" });
    expect(run.status).toBe(422);
    expect(/id="deadman-max_run_minutes-error">([^<]+)</.exec(run.text)![1]).toContain("number of minutes");
    expect((await a.b.post(`/notes/${id}/deadman`, { every: "2", unit: "hours", max_run_minutes: "30", alert_webhook: "yes" })).status).toBe(303);
    expect(await noteRow(id)).toMatchObject({ expectedIntervalSeconds: 7200, maxRunSeconds: 1800, alertWebhook: true });
    expect((await a.b.get(`/notes/${id}/settings`)).text).toMatch(/name="alert_webhook" value="yes" checked/);

    const days = await a.b.post(`/notes/${id}/retention`, { retention: "drop_oldest", retention_days: "0" });
    expect(days.status).toBe(422);
    expect(/id="retention-retention_days-error">([^<]+)</.exec(days.text)![1]).toContain("from 1 to 3650");
    expect(days.text).toMatch(/<option value="drop_oldest" selected>/);
    expect((await noteRow(id)).retention).toBe("reject");
  });
});

describe("the dead-man's switch follows the plan", () => {
  test("on a free account it is shown disabled with the plans that have it; a forged post is refused with the same words", async () => {
    await start();
    const a = await signedIn("free");
    const dev = await h.account("dev");
    const id = await stream(dev, "cron.log");
    // Moved into the free account's workspace: free plans have no API to make a stream with.
    await h.deps.db.update(notes).set({ workspaceId: a.workspaceId }).where(eq(notes.id, id));
    const page = await a.b.get(`/notes/${id}/settings`);
    expect(page.text).toContain("Available on Dev and Team.");
    expect(page.text).toMatch(/<fieldset class="group" disabled>[^]*name="every"[^]*<\/fieldset>/);
    expect(page.text).not.toContain("Send a test alert");

    const forged = await a.b.post(`/notes/${id}/deadman`, { every: "1", unit: "hours" });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain("The dead-man&#39;s switch is available on Dev and Team.");
    expect((await noteRow(id)).expectedIntervalSeconds).toBeNull();
  });

  test("in the alternate profile the words follow its tiers", async () => {
    await start({ NOTESTREAM_LIMIT_PROFILE: "alternate" });
    const a = await signedIn("dev");
    const id = await stream(a, "cron.log");
    expect((await a.b.get(`/notes/${id}/settings`)).text).toContain("Available on Dev-pro.");
  });
});

describe("test deliveries", () => {
  test("one delivery through the normal path: signed, in the chat format set, type webhook.test in the generic envelope, in the deliveries list", async () => {
    await start({ NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "127.0.0.0/8" });
    r = receiver();
    const a = await signedIn("dev");
    const id = await stream(a, "payments.log");
    expect((await a.b.post(`/notes/${id}/webhook`, { webhook_url: `${r.url}/discord`, webhook_format: "discord" })).status).toBe(303);
    const res = await a.b.post(`/notes/${id}/webhook/test`, {});
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/notes/${id}/settings`);
    await h.jobs.drain();
    await r.waitFor(1);
    const got = r.received[0]!;
    const body = JSON.parse(got.body);
    expect(body.content).toStartWith("[payments.log] This is a test delivery");
    expect(body.allowed_mentions).toEqual({ parse: [] });
    const secret = (await noteRow(id)).webhookSecret!;
    expect(new Webhook(secret).verify(got.body, got.headers)).toBeTruthy();
    expect(got.headers["webhook-id"]).toStartWith("dlv_test");

    // The generic envelope says what it is.
    await a.b.post(`/notes/${id}/webhook`, { webhook_url: `${r.url}/generic`, webhook_format: "generic" });
    await a.b.post(`/notes/${id}/webhook/test`, {});
    await h.jobs.drain();
    await r.waitFor(2);
    expect(JSON.parse(r.received[1]!.body)).toMatchObject({ type: "webhook.test", data: { note: { id, filename: "payments.log" } } });

    const token = await h.token(a, ["read"]);
    const list = await (await h.request("GET", `/api/v1/notes/${id}/webhook/deliveries`, { token })).json();
    expect(list).toHaveLength(2);
    expect(Object.keys(list[0]).sort()).toEqual(["at", "attempt", "delivery_id", "disabled_webhook", "duration_ms", "error", "response", "status_code", "url"]);
    const page = await a.b.get(`/notes/${id}/settings`);
    expect(page.text).toMatch(/<span class="badge">test<\/span>/);
    expect(page.text).toMatch(/<td data-label="Answer">200 in \d+ ms<\/td>/);
    // Nothing was appended.
    expect((await noteRow(id)).byteSize).toBe(Buffer.byteLength("first line\n"));
  });

  test("a failing test is tried once and neither counts towards disabling the webhook nor re-arms a disabled one", async () => {
    await start({ NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "127.0.0.0/8" });
    r = receiver(() => new Response("down for maintenance", { status: 503, headers: { "retry-after": "1" } }));
    const a = await signedIn("dev");
    const id = await stream(a, "flaky.log");
    await a.b.post(`/notes/${id}/webhook`, { webhook_url: `${r.url}/hook` });
    await h.deps.db.update(notes).set({ webhookFailures: 9 }).where(eq(notes.id, id));
    await a.b.post(`/notes/${id}/webhook/test`, {});
    await h.jobs.drain();
    h.clock.advance(3_600_000);
    await h.jobs.drain();
    expect(r.received).toHaveLength(1);
    expect(await noteRow(id)).toMatchObject({ webhookFailures: 9, webhookStatus: "enabled" });
    const job = await h.deps.db.select({ status: jobs.status, attempts: jobs.attempts }).from(jobs).where(eq(jobs.queue, "webhook"));
    expect(job).toEqual([{ status: "failed", attempts: 1 }]);
    expect((await a.b.get(`/notes/${id}/settings`)).text).toContain("the receiver answered 503 Service Unavailable");

    // A disabled webhook can be tested (that is how a fixed receiver is checked); it stays disabled.
    await h.deps.db.update(notes).set({ webhookStatus: "disabled" }).where(eq(notes.id, id));
    await a.b.post(`/notes/${id}/webhook/test`, {});
    await h.jobs.drain();
    expect(r.received).toHaveLength(2);
    expect((await noteRow(id)).webhookStatus).toBe("disabled");
  });

  test("without a webhook URL the button is not offered, and a forged post says why above the form", async () => {
    await start();
    const a = await signedIn("dev");
    const id = await stream(a, "quiet.log");
    expect((await a.b.get(`/notes/${id}/settings`)).text).not.toContain("Send a test delivery");
    const res = await a.b.post(`/notes/${id}/webhook/test`, {});
    expect(res.status).toBe(422);
    expect(res.text).toContain("Save a webhook URL first.");
  });
});

describe("test alerts", () => {
  test("the alert mail, marked as a test, to the signed-in account's address; the stream is left as it was; five an hour", async () => {
    await start({ NOTESTREAM_MIN_INTERVAL_SECONDS: "60" });
    const a = await signedIn("dev");
    const id = await stream(a, "backup.log");
    expect((await a.b.get(`/notes/${id}/settings`)).text).not.toContain("Send a test alert");
    await a.b.post(`/notes/${id}/deadman`, { every: "2", unit: "hours", alert_email: "oncall@example.com" });
    const before = await noteRow(id);
    const res = await a.b.post(`/notes/${id}/deadman/test`, {});
    expect(res.status).toBe(303);
    await h.jobs.drain();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.to).toBe(a.email);
    expect(sent[0]!.subject).toBe("[notestream] [test] backup.log has gone quiet");
    expect(sent[0]!.text).toStartWith('This is a test of the alert for "backup.log"');
    expect(sent[0]!.text).toContain("oncall@example.com");
    expect(sent[0]!.text).toContain("  first line");
    expect(await noteRow(id)).toMatchObject({ deadmanStatus: "ok", deadmanDueAt: before.deadmanDueAt });
    expect((await a.b.get(`/notes/${id}/settings`)).text).toContain(`Test alert sent to ${a.email}`);

    for (let i = 0; i < 4; i++) expect((await a.b.post(`/notes/${id}/deadman/test`, {})).status).toBe(303);
    const sixth = await a.b.post(`/notes/${id}/deadman/test`, {});
    expect(sixth.status).toBe(429);
    expect(sixth.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(sixth.text).toContain("At most 5 test alerts an hour.");
  });
});

describe("delivery errors in words", () => {
  test("the deliveries list says what happened; status and time only when the receiver answered; the API keeps the raw error", async () => {
    await start();
    const a = await signedIn("dev");
    const id = await stream(a, "words.log");
    const rows: [string | null, number | null][] = [
      ["connect ECONNREFUSED hooks.example.com:443", null],
      ["target refused: getaddrinfo ENOTFOUND", null],
      ["no answer within 10000 ms", null],
      ["self signed certificate", null],
      ["HTTP 500", 500],
      [null, 204],
    ];
    await h.deps.db.insert(webhookAttempts).values(
      rows.map(([error, status], i) => ({
        noteId: id,
        deliveryId: `dlv_${String(i).padStart(20, "0")}`,
        attempt: 1,
        at: Date.now() + i,
        url: "https://hooks.example.com/x",
        statusCode: status,
        durationMs: 87,
        error,
        response: null,
        disabled: false,
      })),
    );
    const page = (await a.b.get(`/notes/${id}/settings`)).text;
    const cells = (label: string) => [...page.matchAll(new RegExp(`<td data-label="${label}">(.*?)</td>`, "g"))].map((m) => m[1]!.replace(/<[^>]+>/g, ""));
    expect(cells("Result")).toEqual([
      "delivered",
      "the receiver answered 500 Internal Server Error",
      "TLS certificate not valid: it is self-signed",
      "timed out after 10 s",
      "the name does not resolve",
      "connection refused",
    ]);
    expect(cells("Answer")).toEqual(["204 in 87 ms", "500 in 87 ms", "no answer", "no answer", "no answer", "no answer"]);
    expect(page).not.toContain("ECONNREFUSED");
    const token = await h.token(a, ["read"]);
    const api = await (await h.request("GET", `/api/v1/notes/${id}/webhook/deliveries`, { token })).json();
    expect(api.at(-1).error).toBe("connect ECONNREFUSED hooks.example.com:443");
  });
});

describe("tables on a phone", () => {
  test("exports and tokens are card tables: a label on every cell, a name of its own for each row's button or link", async () => {
    await start();
    const a = await signedIn("dev");
    for (const name of ["laptop", "laptop", "ci"]) await a.b.post("/settings/tokens", { name, scope: "read" });
    for (let i = 0; i < 2; i++) expect((await a.b.post("/settings/export", {})).status).toBe(303);
    await h.jobs.drain();
    const pages = [(await a.b.get("/settings")).text, (await a.b.get("/settings/tokens")).text];
    for (const page of pages) {
      const tables = [...page.matchAll(/<table([^>]*)>([^]*?)<\/table>/g)];
      expect(tables.length).toBeGreaterThan(0);
      for (const [, attrs, inner] of tables.filter(([, attrs]) => /exports|tokens/.test(attrs!))) {
        expect(attrs).toMatch(/class="cards /);
        const cells = [...inner!.matchAll(/<td([^>]*)>/g)].map((m) => m[1]!);
        expect(cells.length).toBeGreaterThan(0);
        expect(cells.filter((c) => !/data-label="[^"]*"/.test(c))).toEqual([]);
      }
    }
    const downloads = [...pages[0]!.matchAll(/<a href="\/exports\/[^"]+\/download" aria-label="([^"]+)"/g)].map((m) => m[1]!);
    expect(downloads).toHaveLength(2);
    expect(new Set(downloads).size).toBe(2);
    const revokes = [...pages[1]!.matchAll(/aria-label="(Revoke [^"]+)"/g)].map((m) => m[1]!);
    expect(revokes).toContain("Revoke ci");
    expect(revokes.filter((n) => n.startsWith("Revoke laptop (tok_"))).toHaveLength(2);
    expect(new Set(revokes).size).toBe(revokes.length);
  });
});
