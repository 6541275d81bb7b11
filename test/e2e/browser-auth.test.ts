/**
 * Sign-up, sign-in, the account page and the browser's error pages in Chromium: refused forms
 * come back with what was typed and the message beside the field, an unconfirmed sign-in resends
 * its link from a form right there (through the loopback SMTP server), unknown pages are pages,
 * and deleting the account goes through the export offer, the password and the mailed link.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import type { Page } from "playwright-core";
import { accounts } from "../../src/db/tables";
import { hasChromium, PASSWORD, startWebApp, type WebApp } from "../helpers/browser";

/** The page's globals, inside functions that run in the browser (the project's types have no DOM). */
declare const document: any;
declare const axe: any;

let web: WebApp;

beforeAll(async () => {
  if (hasChromium) web = await startWebApp();
}, 60_000);

afterAll(async () => {
  await web?.close();
});

/** The mails to `to` whose subject has `subject`, waiting until there are `count`. */
async function mailsTo(to: string, subject: string, count: number, ms = 10_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = web.smtp.mails.filter((m) => m.to.includes(to) && m.subject.includes(subject));
    if (found.length >= count) return found;
    if (Date.now() > deadline) throw new Error(`got ${found.length} of ${count} mails "${subject}" to ${to}`);
    await Bun.sleep(20);
  }
}

/** The message a field points at with aria-describedby, and whether it says it is invalid. */
async function fieldMessage(page: Page, selector: string): Promise<{ invalid: string | null; message: string | null }> {
  const input = page.locator(selector);
  const ids = ((await input.getAttribute("aria-describedby")) ?? "").split(/\s+/).filter(Boolean);
  const errors: string[] = [];
  for (const id of ids) {
    const el = page.locator(`#${id}.field-error`);
    if (await el.count()) errors.push((await el.textContent())!.trim());
  }
  return { invalid: await input.getAttribute("aria-invalid"), message: errors.join(" ") || null };
}

const focusedName = (page: Page) => page.evaluate(() => document.activeElement?.getAttribute("name") ?? null);

describe.skipIf(!hasChromium)("sign-up, sign-in, the account and error pages in Chromium", () => {
  test("a refused sign-up keeps the e-mail, the name and the age box, and says what is wrong beside the field", async () => {
    const { page, context } = await web.newPage();
    await page.goto(`${web.base}/signup`);
    expect(await page.textContent("form")).toContain("any character that is not a letter or a digit");
    await page.fill('input[name="email"]', "dana@mailinator.com");
    await page.fill('input[name="name"]', "Dana Scully");
    await page.fill('input[name="password"]', "Correct-horse-battery-9");
    await page.check('input[name="age_confirmed"]');
    await page.click('button:has-text("Create account")');
    await page.waitForSelector(".field-error");
    expect(await page.inputValue('input[name="email"]')).toBe("dana@mailinator.com");
    expect(await page.inputValue('input[name="name"]')).toBe("Dana Scully");
    expect(await page.isChecked('input[name="age_confirmed"]')).toBe(true);
    expect(await page.inputValue('input[name="password"]')).toBe("");
    expect(await fieldMessage(page, 'input[name="email"]')).toEqual({ invalid: "true", message: "Disposable e-mail addresses can't be used; use an address you keep." });
    expect(await fieldMessage(page, 'input[name="password"]')).toEqual({ invalid: null, message: null });
    expect(await focusedName(page)).toBe("email");

    // An address the browser takes but the service does not: the same, in place.
    await page.fill('input[name="email"]', "dana@localhost");
    await page.fill('input[name="password"]', "Correct-horse-battery-9");
    await page.click('button:has-text("Create account")');
    await page.waitForSelector(".field-error");
    expect(await fieldMessage(page, 'input[name="email"]')).toEqual({ invalid: "true", message: "Enter a valid e-mail address." });
    expect(await page.inputValue('input[name="name"]')).toBe("Dana Scully");

    // Fixed, it goes through: the passphrase's hyphens are its symbols.
    await page.fill('input[name="email"]', "dana.scully@example.com");
    await page.fill('input[name="password"]', "Correct-horse-battery-9");
    await page.click('button:has-text("Create account")');
    await page.waitForURL(/\/signin\?ok=/);
    expect(await page.textContent(".flash.ok")).toContain("dana.scully@example.com");
    await context.close();
  }, 30_000);

  test("a wrong password keeps the e-mail, with the message at the top of the form", async () => {
    const { account, context: theirs } = await web.signedInPage();
    await theirs.close();
    const { page, context } = await web.newPage();
    await page.goto(`${web.base}/signin`);
    await page.fill('input[name="email"]', account.email);
    await page.fill('input[name="password"]', "Wrong-password-1");
    await page.click('button:has-text("Sign in")');
    await page.waitForSelector('form[action="/signin"] [role="alert"]');
    expect(await page.textContent('form[action="/signin"] [role="alert"]')).toBe("That e-mail address and password don't match an account.");
    expect(await page.inputValue('input[name="email"]')).toBe(account.email);
    expect(await page.inputValue('input[name="password"]')).toBe("");
    await page.fill('input[name="password"]', PASSWORD);
    await page.click('button:has-text("Sign in")');
    // The account's first sign-in: the onboarding, once.
    await page.waitForURL(`${web.base}/onboarding`);
    await context.close();
  }, 30_000);

  test("an unconfirmed account's sign-in offers to resend the link right there, and the mail arrives", async () => {
    const email = `late-${Date.now()}@example.com`;
    const { page, context } = await web.newPage();
    await page.goto(`${web.base}/signup`);
    await page.fill('input[name="email"]', email);
    await page.fill('input[name="password"]', PASSWORD);
    await page.check('input[name="age_confirmed"]');
    await page.click('button:has-text("Create account")');
    await page.waitForURL(/\/signin\?ok=/);
    await mailsTo(email, "confirm", 1);

    await page.fill('form[action="/signin"] input[name="email"]', email);
    await page.fill('form[action="/signin"] input[name="password"]', PASSWORD);
    await page.click('button:has-text("Sign in")');
    await page.waitForSelector('form[action="/confirm/resend"]');
    expect(await page.textContent('form[action="/signin"] [role="alert"]')).toContain("ask for a new one below");
    expect(await page.inputValue('form[action="/confirm/resend"] input[name="email"]')).toBe(email);
    await page.click('button:has-text("Send the link again")');
    await page.waitForURL(/\/signin\?ok=/);
    expect(await page.textContent(".flash.ok")).toBe("If that address has an unconfirmed account, a new link is on its way.");
    const mails = await mailsTo(email, "confirm", 2);
    await page.goto(/https?:\/\/\S+\/confirm\?token=\w+/.exec(mails[1]!.text)![0]);
    expect(await page.textContent(".flash.ok")).toContain("confirmed");
    await context.close();
  }, 30_000);

  test("an unknown address is a page in the layout with a way back, and the favicon loads", async () => {
    const { page, context } = await web.signedInPage();
    const answer = await page.goto(`${web.base}/no-such-page`);
    expect(answer!.status()).toBe(404);
    expect(await page.textContent("main h1")).toBe("Page not found");
    await page.click('main a:has-text("Back to your notes")');
    await page.waitForURL(`${web.base}/notes`);
    const href = await page.getAttribute('link[rel="icon"]', "href");
    const svg = await page.goto(`${web.base}${href}`);
    expect([svg!.status(), svg!.headers()["content-type"]]).toEqual([200, "image/svg+xml"]);
    await context.close();
  }, 30_000);

  test("deleting the account: the export offered first, the password, the mailed link; then sign-in and the API token fail", async () => {
    const { page, context, account, token } = await web.signedInPage({ plan: "dev" });
    expect((await web.api(token, "POST", "/api/v1/notes/by-filename/goodbye.log/append", { text: "last line" })).status).toBe(201);
    await page.goto(`${web.base}/settings`);
    await page.click('a:has-text("Delete your account")');
    await page.waitForURL(`${web.base}/settings/delete`);
    // The export comes first on the page, before the form that deletes.
    const order = await page.evaluate(() => [...document.querySelectorAll("form")].map((f: any) => f.getAttribute("action")));
    expect(order.indexOf("/settings/export")).toBeGreaterThanOrEqual(0);
    expect(order.indexOf("/settings/export")).toBeLessThan(order.indexOf("/settings/delete"));

    await page.fill('form[action="/settings/delete"] input[name="password"]', "Wrong-password-1");
    await page.click('button:has-text("Mail me the link")');
    await page.waitForSelector(".field-error");
    expect(await fieldMessage(page, 'form[action="/settings/delete"] input[name="password"]')).toEqual({ invalid: "true", message: "That is not your current password." });
    await page.fill('form[action="/settings/delete"] input[name="password"]', PASSWORD);
    await page.click('button:has-text("Mail me the link")');
    await page.waitForURL(/\/settings\/delete\?ok=/);
    const [mail] = await mailsTo(account.email, "deleting your account", 1);
    await page.goto(/https?:\/\/\S+\/settings\/delete\/confirm\?token=\w+/.exec(mail!.text)![0]);
    expect(await page.textContent("h1")).toBe(`Delete ${account.email}?`);
    await page.click('button:has-text("Delete my account for good")');
    await page.waitForURL(/\/signin\?ok=/);
    expect(await page.textContent(".flash.ok")).toContain("is deleted");

    expect((await web.api(token, "GET", "/api/v1/notes")).status).toBe(401);
    await page.fill('input[name="email"]', account.email);
    await page.fill('input[name="password"]', PASSWORD);
    await page.click('button:has-text("Sign in")');
    await page.waitForSelector('form[action="/signin"] [role="alert"]');
    expect(await page.textContent('form[action="/signin"] [role="alert"]')).toBe("That e-mail address and password don't match an account.");
    await mailsTo(account.email, "your account is deleted", 1);
    expect(await web.deps.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, account.id))).toEqual([]);
    await context.close();
  }, 30_000);

  test("forms shown again with their messages, the deletion pages and the error pages: nothing serious for axe-core, nothing wider than a phone", async () => {
    const { account, context: theirs } = await web.signedInPage({ plan: "dev" });
    const context = await web.browser.newContext({ viewport: { width: 390, height: 844 } });
    await context.addCookies(await theirs.cookies());
    await context.addInitScript({ path: require.resolve("axe-core/axe.min.js") });
    const page = await context.newPage();
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) web.violations.push(m.text());
    });
    const problems: string[] = [];
    const check = async (name: string) => {
      const found: { id: string; impact: string; targets: string[] }[] = await page.evaluate(async () => {
        const r = await axe.run(document, { resultTypes: ["violations"] });
        return r.violations.map((v: any) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n: any) => n.target.join(" ")) }));
      });
      for (const v of found) if (v.impact === "serious" || v.impact === "critical") problems.push(`${name}: ${v.id} at ${v.targets.join(", ")}`);
      const wide = await page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);
      if (wide) problems.push(`${name}: wider than the screen`);
      expect(await page.locator("h1").count()).toBeGreaterThan(0);
    };
    await page.goto(`${web.base}/settings`);
    await page.fill('input[name="current_password"]', "Wrong-password-1");
    await page.fill('input[name="new_password"]', "Another-pass-1");
    await page.click('button:has-text("Change password")');
    await page.waitForSelector(".field-error");
    await check("account, a refused password change");
    await page.goto(`${web.base}/settings/delete`);
    await check("delete");
    await page.goto(`${web.base}/no-such-page`);
    await check("404");
    await page.context().clearCookies();
    await page.goto(`${web.base}/signup`);
    await page.fill('input[name="email"]', "x@mailinator.com");
    await page.fill('input[name="password"]', "Abcdefgh1-");
    await page.click('button:has-text("Create account")');
    await page.waitForSelector(".field-error");
    await check("sign-up, refused");
    await page.goto(`${web.base}/signin`);
    await page.fill('input[name="email"]', account.email);
    await page.fill('input[name="password"]', "Wrong-password-1");
    await page.click('button:has-text("Sign in")');
    await page.waitForSelector('[role="alert"]');
    await check("sign-in, refused");
    await page.goto(`${web.base}/settings/delete/confirm?token=nope`);
    await check("deletion link, expired");
    expect(problems).toEqual([]);
    await context.close();
    await theirs.close();
  }, 60_000);

  test("no page broke its Content-Security-Policy", () => {
    expect(web.violations).toEqual([]);
  });
});
