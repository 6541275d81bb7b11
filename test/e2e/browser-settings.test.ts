/**
 * The forms that create, rotate and configure, in Chromium: tokens and inbox URLs answered with a
 * redirect (a reload mints nothing and rotates nothing; the secret is shown once), refused input
 * shown beside its field with the input kept, the dead-man's switch shown disabled where the plan
 * lacks it, test deliveries and test alerts, readable delivery errors, and narrow screens.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, count, eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import type { Page } from "playwright-core";
import { notes, tokens } from "../../src/db/tables";
import { parseCidr } from "../../src/lib/ip";
import { AXE, axeProblems, hasChromium, startWebApp, streamOf as streamOfUser, type SignedIn, type WebApp } from "../helpers/browser";
import { receiver } from "../helpers/receiver";

/** The page's globals, inside functions that run in the browser (the project's types have no DOM). */
declare const document: any;
declare const window: any;

let web: WebApp;

beforeAll(async () => {
  if (!hasChromium) return;
  web = await startWebApp({ NOTESTREAM_MIN_INTERVAL_SECONDS: "60" });
}, 60_000);

afterAll(async () => {
  if (hasChromium) await web?.close();
});

/** Loopback receivers are reachable only while a test opens them, as an operator's allow-list would. */
function allowLoopback(on: boolean) {
  web.deps.config.webhookAllow = on ? [parseCidr("127.0.0.0/8")] : [];
}

const streamOf = (user: SignedIn, filename: string) => streamOfUser(web, user, filename);

const tokensNamed = async (workspaceId: string, name: string) =>
  (await web.deps.db.select({ n: count() }).from(tokens).where(and(eq(tokens.workspaceId, workspaceId), eq(tokens.name, name))))[0]!.n;

/** The accessible description of a field: the text of the elements its aria-describedby names. */
const describedBy = (page: Page, selector: string) =>
  page.locator(selector).evaluate((el: any) =>
    (el.getAttribute("aria-describedby") ?? "")
      .split(/\s+/)
      .filter(Boolean)
      .map((id: string) => document.getElementById(id)?.textContent ?? "")
      .join(" "),
  );

describe.skipIf(!hasChromium)("creating and rotating answer with a redirect", () => {
  test("mint a token, reload: still exactly one token, and the secret is no longer shown", async () => {
    const user = await web.signedInPage({ plan: "dev" });
    const { page } = user;
    await page.goto(`${web.base}/settings/tokens`);
    await page.fill('input[name="name"]', "laptop");
    await page.check('input[name="scope"][value="read"]');
    await page.click('button:has-text("Create token")');
    const secret = await page.inputValue("#new-token");
    expect(secret).toMatch(/^nst_[0-9A-Za-z]{40}$/);
    expect(page.url()).toBe(`${web.base}/settings/tokens`);
    expect(await tokensNamed(user.account.workspaceId, "laptop")).toBe(1);

    await page.reload();
    await page.waitForSelector("h1");
    expect(await tokensNamed(user.account.workspaceId, "laptop")).toBe(1);
    expect(await page.locator("#new-token").count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    // The one token works: it was shown, and it is the one that was kept.
    expect((await web.api(secret, "GET", "/api/v1/notes")).status).toBe(200);
    await user.context.close();
  }, 30_000);

  test("rotate the inbox, reload: one rotation, and the URL shown still works", async () => {
    const user = await web.signedInPage({ plan: "dev" });
    const id = await streamOf(user, "hooks.log");
    await user.page.goto(`${web.base}/notes/${id}/settings`);
    await user.page.click('button:has-text("Create an inbox URL")');
    const inbox = await user.page.inputValue("#inbox-url");
    expect(inbox).toMatch(/\/h\/inb_\w+$/);
    expect(user.page.url()).toBe(`${web.base}/notes/${id}/settings`);

    await user.page.reload();
    await user.page.waitForSelector("h1");
    expect(await user.page.locator("#inbox-url").count()).toBe(0);
    expect(await user.page.content()).not.toContain(inbox);
    // A second rotation would have ended this URL.
    expect((await fetch(inbox, { method: "POST", body: "still the same inbox" })).status).toBe(202);
    await user.context.close();
  }, 30_000);
});

describe.skipIf(!hasChromium)("forms keep their input and say what is wrong beside the field", () => {
  test("a loopback webhook URL: the URL stays typed, with browser wording beside it", async () => {
    allowLoopback(false);
    const user = await web.signedInPage({ plan: "dev" });
    await user.context.addInitScript({ path: AXE });
    const id = await streamOf(user, "deploys.log");
    const { page } = user;
    await page.goto(`${web.base}/notes/${id}/settings`);
    await page.fill('input[name="webhook_url"]', "http://127.0.0.1:9000/hook");
    await page.selectOption('select[name="webhook_format"]', "slack");
    await page.click('button:has-text("Save webhook")');
    await page.waitForSelector('input[name="webhook_url"][aria-invalid="true"]');
    expect(await page.inputValue('input[name="webhook_url"]')).toBe("http://127.0.0.1:9000/hook");
    expect(await page.inputValue('select[name="webhook_format"]')).toBe("slack");
    const message = await describedBy(page, 'input[name="webhook_url"]');
    expect(message).toContain("which notestream does not call by default");
    expect(message).toContain("NOTESTREAM_WEBHOOK_ALLOW_CIDRS");
    expect(message).not.toContain("webhook_url");
    expect(await page.textContent("main")).not.toContain("points at 127.0.0.1");
    expect(await axeProblems(page)).toEqual([]);
    const note = (await (await web.api(user.token, "GET", `/api/v1/notes/${id}`)).json()) as any;
    expect(note.webhook_url).toBeNull();
    expect(web.violations).toEqual([]);
    await user.context.close();
  }, 30_000);

  test("a token without a scope, and a dead-man interval too long: each message beside its field, the input kept", async () => {
    const user = await web.signedInPage({ plan: "dev" });
    const { page } = user;
    await page.goto(`${web.base}/settings/tokens`);
    await page.fill('input[name="name"]', "ci runner");
    await page.uncheck('input[name="scope"][value="append"]');
    await page.fill('input[name="expires_in_days"]', "30");
    await page.click('button:has-text("Create token")');
    await page.waitForSelector('[aria-invalid="true"]');
    expect(await page.inputValue('input[name="name"]')).toBe("ci runner");
    expect(await page.inputValue('input[name="expires_in_days"]')).toBe("30");
    expect(await describedBy(page, "fieldset.scopes")).toContain("Choose at least one scope");
    expect(await tokensNamed(user.account.workspaceId, "ci runner")).toBe(0);

    const id = await streamOf(user, "nightly.log");
    await page.goto(`${web.base}/notes/${id}/settings`);
    await page.fill('input[name="every"]', "9000");
    await page.selectOption('select[name="unit"]', "hours");
    await page.fill('input[name="alert_email"]', "ops@example.com");
    await page.click('form[action$="/deadman"] button:has-text("Save")');
    await page.waitForSelector('input[name="every"][aria-invalid="true"]');
    expect(await page.inputValue('input[name="every"]')).toBe("9000");
    expect(await page.inputValue('input[name="alert_email"]')).toBe("ops@example.com");
    expect(await describedBy(page, 'input[name="every"]')).toContain("366 days");
    expect(web.violations).toEqual([]);
    await user.context.close();
  }, 30_000);
});

describe.skipIf(!hasChromium)("plan-gated settings", () => {
  test("on a free account the dead-man's switch is shown disabled, with the plans that have it", async () => {
    const user = await web.signedInPage({ plan: "free" });
    await user.context.addInitScript({ path: AXE });
    const id = await streamOf(user, "cron.log");
    await user.page.goto(`${web.base}/notes/${id}/settings`);
    const card = user.page.locator(".card", { has: user.page.locator("h2", { hasText: "Alert when it goes quiet" }) });
    expect(await card.textContent()).toContain("Available on Dev and Team");
    expect(await card.locator('input[name="every"]').isDisabled()).toBe(true);
    expect(await card.locator('input[name="alert_email"]').isDisabled()).toBe(true);
    expect(await card.locator("button:enabled").count()).toBe(0);
    expect(await axeProblems(user.page)).toEqual([]);
    await user.context.close();
  }, 30_000);
});

describe.skipIf(!hasChromium)("test deliveries and test alerts", () => {
  test("Send a test delivery: one signed delivery in the stream's chat format, and its result in the list", async () => {
    allowLoopback(true);
    const r = receiver();
    try {
      const user = await web.signedInPage({ plan: "dev" });
      const id = await streamOf(user, "payments.log");
      const { page } = user;
      await page.goto(`${web.base}/notes/${id}/settings`);
      await page.fill('input[name="webhook_url"]', `${r.url}/slack`);
      await page.selectOption('select[name="webhook_format"]', "slack");
      await page.click('button:has-text("Save webhook")');
      await page.waitForSelector(".flash.ok");
      await page.click('button:has-text("Send a test delivery")');
      await page.waitForSelector(".flash.ok");
      await r.waitFor(1, 10_000);
      expect(r.received).toHaveLength(1);
      const got = r.received[0]!;
      expect(got.path).toBe("/slack");
      expect(JSON.parse(got.body).text).toStartWith("[payments.log] ");
      expect(JSON.parse(got.body).text).toContain("test");
      const note = (await (await web.api(user.token, "GET", `/api/v1/notes/${id}`)).json()) as any;
      expect(new Webhook(note.webhook_secret).verify(got.body, got.headers)).toBeTruthy();

      for (let i = 0; i < 50 && (await page.locator("table.deliveries td").count()) === 0; i++) {
        await Bun.sleep(100);
        await page.reload();
      }
      const row = page.locator("table.deliveries tr", { has: page.locator("td") }).first();
      expect(await row.textContent()).toContain("test");
      expect(await row.locator('td[data-label="Answer"]').textContent()).toContain("200");
      // No append was made: the stream holds its one line.
      expect(note.byte_size).toBe(Buffer.byteLength("first line\n"));
      await user.context.close();
    } finally {
      r.stop();
      allowLoopback(false);
    }
  }, 30_000);

  test("Send a test alert: the alert mail, marked as a test, to the account's address", async () => {
    const user = await web.signedInPage({ plan: "dev" });
    const id = await streamOf(user, "backup.log");
    const { page } = user;
    await page.goto(`${web.base}/notes/${id}/settings`);
    await page.fill('input[name="every"]', "2");
    await page.selectOption('select[name="unit"]', "hours");
    await page.click('form[action$="/deadman"] button:has-text("Save")');
    await page.waitForSelector(".flash.ok");
    const before = web.smtp.mails.length;
    await page.click('button:has-text("Send a test alert")');
    await page.waitForSelector(".flash.ok");
    await web.smtp.waitFor(before + 1, 10_000);
    const mail = web.smtp.mails.slice(before).find((m) => m.to.includes(user.account.email))!;
    expect(mail).toBeTruthy();
    expect(mail.subject).toMatch(/test/i);
    expect(mail.subject).toContain("backup.log");
    expect(mail.text).toMatch(/this is a test/i);
    expect(mail.text).toContain("first line");
    // Still watching: a test changes nothing on the stream.
    const [row] = await web.deps.db.select({ s: notes.deadmanStatus }).from(notes).where(eq(notes.id, id));
    expect(row!.s).toBe("ok");
    await user.context.close();
  }, 30_000);

  test("a delivery that got no answer reads 'connection refused', without a status or a duration; the API keeps the raw error", async () => {
    allowLoopback(true);
    try {
      const user = await web.signedInPage({ plan: "dev" });
      const id = await streamOf(user, "refused.log");
      const { page } = user;
      await page.goto(`${web.base}/notes/${id}/settings`);
      // Port 9 (discard) has no listener on the test machine: the connection is refused.
      await page.fill('input[name="webhook_url"]', "http://127.0.0.1:9/hook");
      await page.click('button:has-text("Save webhook")');
      await page.waitForSelector(".flash.ok");
      await page.click('button:has-text("Send a test delivery")');
      let attempts: any[] = [];
      for (let i = 0; i < 100 && attempts.length === 0; i++) {
        await Bun.sleep(50);
        attempts = (await (await web.api(user.token, "GET", `/api/v1/notes/${id}/webhook/deliveries`)).json()) as any[];
      }
      expect(attempts[0].error).toContain("ECONNREFUSED");
      expect(attempts[0].status_code).toBeNull();
      await page.reload();
      const row = page.locator("table.deliveries tr", { has: page.locator("td") }).first();
      expect(await row.locator('td[data-label="Result"]').textContent()).toContain("connection refused");
      expect(await row.textContent()).not.toContain("ECONNREFUSED");
      expect(await row.locator('td[data-label="Answer"]').textContent()).not.toMatch(/\d+ ms/);
      await user.context.close();
    } finally {
      allowLoopback(false);
    }
  }, 30_000);
});

describe.skipIf(!hasChromium)("on a 390 px phone", () => {
  const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

  test("tokens and a stream's settings stay inside the screen; tables are cards with a label on every cell; row buttons have names of their own", async () => {
    allowLoopback(true);
    try {
      const user = await web.signedInPage({ plan: "dev", width: 390, height: 844 });
      const { page } = user;
      await page.goto(`${web.base}/settings/tokens`);
      for (const name of ["laptop", "deploy pipeline with a rather long name"]) {
        await page.fill('input[name="name"]', name);
        await page.click('button:has-text("Create token")');
        await page.waitForSelector("#new-token");
      }
      expect(await overflow(page)).toBeLessThanOrEqual(0);
      const labels = await page.evaluate(() => [...document.querySelectorAll("table.cards td")].map((td: any) => td.getAttribute("data-label")));
      expect(labels.length).toBeGreaterThan(0);
      expect(labels.filter((l: string | null) => l === null)).toEqual([]);
      const revokes = await page.locator('button:has-text("Revoke")').evaluateAll((bs: any[]) => bs.map((b) => b.getAttribute("aria-label")));
      expect(revokes).toContain("Revoke laptop");
      expect(new Set(revokes).size).toBe(revokes.length);

      const id = await streamOf(user, "a-stream-with-a-long-filename-for-narrow-screens.log");
      await page.goto(`${web.base}/notes/${id}/settings`);
      await page.fill('input[name="webhook_url"]', "http://127.0.0.1:9/a/very/long/path/that/goes/on/and/on/and/on/for/a/while/longer/than/the/screen");
      await page.click('button:has-text("Save webhook")');
      await page.waitForSelector(".flash.ok");
      await page.click('button:has-text("Send a test delivery")');
      await page.waitForSelector(".flash.ok");
      await page.click('button:has-text("Create an inbox URL")');
      await page.waitForSelector("#inbox-url");
      expect(await page.locator("#webhook-secret").count()).toBe(1);
      expect(await overflow(page)).toBeLessThanOrEqual(0);
      const cells = await page.evaluate(() => [...document.querySelectorAll("main table td")].map((td: any) => [td.closest("table").className, td.getAttribute("data-label")]));
      expect(cells.filter(([cls, label]: any[]) => !String(cls).split(" ").includes("cards") || label === null)).toEqual([]);
      expect(web.violations).toEqual([]);
      await user.context.close();
    } finally {
      allowLoopback(false);
    }
  }, 60_000);
});
