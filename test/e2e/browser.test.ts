/**
 * The web app in a real browser: Debian's Chromium driven by playwright-core, against the app on
 * a loopback port, with mail through a loopback SMTP server. The pages' policy forbids eval, so the
 * tests wait with functions, never strings of script. Also writes the screenshots in
 * docs/screenshots/ that the README shows.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { inboxDeliveries } from "../../src/db/tables";
import type { Deps } from "../../src/deps";
import { CHROMIUM, hasChromium, startWebApp, type WebApp } from "../helpers/browser";
import type { smtpServer } from "../helpers/mail";

/** The page's document, inside functions that run in the browser (the project's types have no DOM). */
declare const document: { getElementById(id: string): { textContent: string | null } | null; querySelector(q: string): { textContent: string | null } | null };

const SHOTS = join(import.meta.dir, "..", "..", "docs", "screenshots");
if (!hasChromium) console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (make test installs Debian's chromium as root)`);

let app: WebApp;
let smtp: Awaited<ReturnType<typeof smtpServer>>;
let deps: Deps;
let page: Page;
let base = "";
let token = "";
let violations: string[] = [];

beforeAll(async () => {
  if (!hasChromium) return;
  app = await startWebApp();
  ({ smtp, deps, base, violations } = app);
  // The pages' Content-Security-Policy allows no inline script or style: any violation is a bug.
  page = (await app.newPage()).page;
  mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  if (!hasChromium) return;
  await app?.close();
});

const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
const apiPost = (path: string, body: unknown) =>
  fetch(`${base}${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });

describe.skipIf(!hasChromium)("the web app in Chromium", () => {
  test("sign up, confirm by the mailed link, sign in", async () => {
    await page.goto(`${base}/signup`);
    await shot("sign-up");
    await page.fill('input[name="email"]', "dana@example.com");
    await page.fill('input[name="password"]', "Brows3r!test");
    await page.check('input[name="age_confirmed"]');
    await page.click('button:has-text("Create account")');
    await page.waitForURL(/\/signin\?ok=/);
    expect(await page.textContent(".flash.ok")).toContain("confirmation link");

    await smtp.waitFor(1, 10_000);
    const link = /https?:\/\/\S+\/confirm\?token=\w+/.exec(smtp.mails[0]!.text)![0];
    await page.goto(link);
    expect(await page.textContent(".flash.ok")).toContain("confirmed");

    await page.fill('input[name="email"]', "dana@example.com");
    await page.fill('input[name="password"]', "Brows3r!test");
    await page.click('button:has-text("Sign in")');
    // The first sign-in asks what the account is for (browser-onboarding.test.ts covers it).
    await page.waitForURL(`${base}/onboarding`);
    await page.click('button.choice:has-text("Writing notes in the browser")');
    await page.waitForURL(`${base}/notes`);
    expect(await page.textContent("aside")).toContain("Inbox");
  }, 30_000);

  test("create a note and edit it: autosave keeps the text across a reload", async () => {
    await page.click('a:has-text("New note")');
    await page.fill('input[name="title"]', "Runbook");
    await page.click('button:has-text("Create note")');
    await page.waitForURL(/\/notes\/note_/);
    await page.fill("#title", "Runbook");
    await page.fill("textarea", "1. Check the queue\n2. Restart the worker\n");
    await page.waitForFunction(() => document.getElementById("save-status")?.textContent?.startsWith("Saved"), undefined, { timeout: 10_000 });
    await page.reload();
    expect(await page.inputValue("#title")).toBe("Runbook");
    expect(await page.inputValue("textarea")).toBe("1. Check the queue\n2. Restart the worker\n");
    await shot("editor");
  }, 30_000);

  test("the account page shows the plan, and the API trial opens the API", async () => {
    await page.goto(`${base}/settings`);
    expect(await page.textContent("main")).toContain("free");
    await page.click('button:has-text("Start the 14-day API trial")');
    await page.waitForURL(/\/settings\?ok=/);
    expect(await page.textContent(".flash.ok")).toContain("trial has started");
    await shot("account");
  }, 30_000);

  test("mint a token, shown once, and use it like curl", async () => {
    await page.goto(`${base}/settings/tokens`);
    await page.check('input[name="scope"][value="read"]');
    await page.check('input[name="scope"][value="write"]');
    await page.fill('input[name="name"]', "laptop");
    await page.click('button:has-text("Create token")');
    token = await page.inputValue("#new-token");
    expect(token).toMatch(/^nst_[0-9A-Za-z]{40}$/);
    await shot("tokens");
    const res = await apiPost("/api/v1/notes/by-filename/live.log/append", { text: "first line from curl" });
    expect(res.status).toBe(201);
    await page.reload();
    expect(await page.textContent("table")).toContain("laptop");
  }, 30_000);

  test("a stream updates while its page is open", async () => {
    // The page follows the stream's events (SSE); it does not poll.
    const requested: string[] = [];
    const onRequest = (r: { url(): string }) => void requested.push(new URL(r.url()).pathname);
    page.on("request", onRequest);
    await page.goto(`${base}/notes?q=live`);
    await page.click('a:has-text("live.log")');
    await page.waitForURL(/\/notes\/note_/);
    expect(await page.textContent("pre.stream")).toContain("first line from curl");
    const size = Number(await page.textContent("#byte-size"));
    await page.waitForTimeout(300);
    for (const line of ["deploy 4f2a1c ok", "payment received: 42.00 EUR"]) expect((await apiPost("/api/v1/notes/by-filename/live.log/append", { text: line })).status).toBe(200);
    await page.waitForFunction(() => document.querySelector("pre.stream")?.textContent?.includes("payment received"), undefined, { timeout: 10_000 });
    expect(await page.textContent("pre.stream")).toContain("first line from curl\ndeploy 4f2a1c ok\npayment received: 42.00 EUR\n");
    expect(Number(await page.textContent("#byte-size"))).toBe(size + Buffer.byteLength("deploy 4f2a1c ok\npayment received: 42.00 EUR\n"));
    page.off("request", onRequest);
    expect(requested.filter((p) => /^\/notes\/note_\w+\/events$/.test(p))).toHaveLength(1);
    expect(requested.filter((p) => p.endsWith("/tail"))).toEqual([]);
    await shot("stream");
  }, 30_000);

  test("rotate the inbox, post to it, and replay a dead letter", async () => {
    await page.click('a:has-text("Webhook, inbox, alerts")');
    await page.waitForURL(/\/settings$/);
    await page.click('button:has-text("Create an inbox URL")');
    const first = await page.inputValue("#inbox-url");
    await page.click('button:has-text("Rotate the inbox URL")');
    const inboxUrl = await page.inputValue("#inbox-url");
    expect(inboxUrl).not.toBe(first);
    expect((await fetch(first, { method: "POST", body: "old" })).status).toBe(404);
    const accepted = await fetch(inboxUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "Disk almost full", message: "92% on db-1" }) });
    expect(accepted.status).toBe(202);

    // A payload that died (retries spent while the note was full, say) waits in the dead-letter view.
    const noteId = /\/notes\/(note_\w+)\//.exec(page.url())![1]!;
    await deps.db.insert(inboxDeliveries).values({
      id: "ibx_deadletter0000001",
      noteId,
      receivedAt: Date.now(),
      contentType: "text/plain",
      headers: "{}",
      body: Buffer.from("replayed payload"),
      status: "dead",
      attempts: 9,
      lastError: "note full",
    });
    await page.goto(`${base}/notes/${noteId}/settings`);
    await shot("stream-settings");
    await page.click('button:has-text("Replay")');
    await page.waitForSelector(".flash.ok");
    await page.goto(`${base}/notes/${noteId}`);
    await page.waitForFunction(() => document.querySelector("pre.stream")?.textContent?.includes("replayed payload"), undefined, { timeout: 10_000 });
    expect(await page.textContent("pre.stream")).toContain("Disk almost full: 92% on db-1");
  }, 30_000);

  test("the notes list", async () => {
    await page.goto(`${base}/notes`);
    expect(await page.textContent(".notes")).toContain("Runbook");
    await shot("notes");
  });

  test("an MCP client's consent in the browser: Allow redirects the code to the client's loopback port despite the form policy", async () => {
    const received: URL[] = [];
    // Only the callback counts: Chromium also asks the client's origin for its /favicon.ico.
    const receiver = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => (new URL(r.url).pathname === "/callback" && received.push(new URL(r.url)), new Response("done")) });
    try {
      const redirect = `http://127.0.0.1:${receiver.port}/callback`;
      const reg = await fetch(`${base}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ redirect_uris: [redirect], client_name: "Browser Agent", token_endpoint_auth_method: "none" }),
      });
      expect(reg.status).toBe(201);
      const { client_id } = (await reg.json()) as { client_id: string };
      const verifier = "v".repeat(50);
      const challenge = new Bun.CryptoHasher("sha256").update(verifier).digest("base64url");
      const u = new URL(`${base}/oauth/authorize`);
      for (const [k, v] of Object.entries({ response_type: "code", client_id, redirect_uri: redirect, code_challenge: challenge, code_challenge_method: "S256", state: "s1" })) u.searchParams.set(k, v);
      await page.goto(u.toString());
      expect(await page.textContent("h1")).toContain("unverified");
      await page.click('button[value="allow"]');
      await page.waitForURL(/\/callback\?/);
      expect(received.length).toBe(1);
      expect(received[0]!.searchParams.get("state")).toBe("s1");
      expect(received[0]!.searchParams.get("code")).toBeTruthy();
    } finally {
      receiver.stop(true);
    }
  }, 30_000);

  test("every page ran under its Content-Security-Policy without a violation, and a note's Delete asks first", async () => {
    for (const path of ["/settings", "/settings/tokens", "/trash", "/notes"]) await page.goto(`${base}${path}`);
    expect(violations).toEqual([]);
    await page.click(".notes a");
    const asked: string[] = [];
    page.once("dialog", (d) => {
      asked.push(d.message());
      void d.dismiss();
    });
    const url = page.url();
    await page.click("form[data-confirm] button");
    expect(asked).toEqual(["Move this note to the trash? You can restore it from Trash for 30 days."]);
    expect(page.url()).toBe(url);
    expect(violations).toEqual([]);
  });
});
