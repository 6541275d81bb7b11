/**
 * The account page's plan section in Chromium. Without billing it lists the tiers and points to
 * `notestream account set-plan`, with no buttons; with billing on, against a loopback stand-in
 * for Lemon Squeezy's API, choosing a tier sends the browser to the checkout the service created
 * (workspace and variant bound by the service), the signed subscription_created moves the plan,
 * Manage billing opens the subscription's customer portal, and the sixth plan action in a minute
 * is refused with the wait message.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { getWorkspace } from "../../src/modules/workspaces/repo";
import { hasChromium, startWebApp, type WebApp } from "../helpers/browser";
import { billingEnv, LS_STORE, LS_VARIANTS, providerStandIn, subscriptionCreated, type ProviderStandIn } from "../helpers/lemonsqueezy";

/** The page's globals, inside functions that run in the browser (the project's types have no DOM). */
declare const document: any;
declare const window: any;
declare const axe: any;

const AXE = require.resolve("axe-core/axe.min.js");

let web: WebApp;
let standIn: ProviderStandIn;

beforeAll(async () => {
  if (!hasChromium) return;
  standIn = providerStandIn();
  web = await startWebApp(billingEnv(standIn));
}, 60_000);

afterAll(async () => {
  if (!hasChromium) return;
  await web?.close();
  standIn.stop();
});

/** The buttons (and button-like links) inside the plan section, by their text. */
const planButtons = (page: Page) => page.locator("#plan table.plans button, #plan .plan-actions button").allTextContents();

async function openAccount(page: Page) {
  await page.goto(`${web.base}/settings`);
  await page.waitForSelector("#plan table.plans");
}

describe.skipIf(!hasChromium)("plans and billing in Chromium", () => {
  test("without billing configured the section lists the tiers, says to use notestream account set-plan, and has no buttons", async () => {
    const saved = web.deps.config.lemonSqueezy;
    web.deps.config.lemonSqueezy = null;
    try {
      const { page, context, account } = await web.signedInPage({ plan: "dev" });
      await openAccount(page);
      const rows = await page.locator("#plan table.plans tbody tr td:first-child").allTextContents();
      expect(rows).toEqual(["Free", "Personal", "Devyour plan", "Team"]);
      expect(await page.textContent("#plan .plan-actions")).toContain(`notestream account set-plan --email ${account.email} --plan dev`);
      expect(await planButtons(page)).toEqual([]);
      expect(await page.locator('#plan a:has-text("Manage billing")').count()).toBe(0);
      expect(web.violations).toEqual([]);
      await context.close();
    } finally {
      web.deps.config.lemonSqueezy = saved;
    }
  }, 30_000);

  test("a paid tier goes to the checkout the service created; subscription_created moves the plan; Manage billing opens the portal", async () => {
    const { page, context, account } = await web.signedInPage({ plan: "free" });
    await openAccount(page);
    expect(await planButtons(page)).toEqual(["Choose Personal", "Choose Dev", "Choose Team"]);
    const before = standIn.requests.length;
    await page.click('button:has-text("Choose Dev")');
    await page.waitForURL(new RegExp(`^${standIn.origin}/checkout/custom/`));
    expect(await page.textContent("h1")).toBe("Stand-in checkout");

    const created = standIn.requests.slice(before);
    expect(created.length).toBe(1);
    const checkout = created[0]!;
    expect(checkout.path).toBe("/v1/checkouts");
    expect(checkout.body.data.relationships.store.data.id).toBe(LS_STORE);
    expect(checkout.body.data.relationships.variant.data.id).toBe(String(LS_VARIANTS.dev));
    expect(checkout.body.data.attributes.checkout_data.custom.workspace_id).toBe(account.workspaceId);
    // The URL the browser landed on is the one the provider answered with.
    expect(page.url()).toBe(checkout.answer.data.attributes.url);

    const event = subscriptionCreated(checkout, "8181");
    const delivered = await fetch(`${web.base}/webhooks/lemonsqueezy`, { method: "POST", headers: { "content-type": "application/json", "x-signature": event.signature }, body: event.body });
    expect(await delivered.json()).toMatchObject({ ok: true, applied: true, event: "subscription_created" });
    expect(await getWorkspace(web.deps, account.workspaceId)).toMatchObject({ plan: "dev", state: "active" });

    await openAccount(page);
    expect(await page.textContent("#plan tr.current td:first-child")).toBe("Devyour plan");
    expect(await planButtons(page)).toEqual(["Manage billing"]);
    await page.click('button:has-text("Manage billing")');
    await page.waitForURL(`${standIn.origin}/billing?subscription=8181&signature=p`);
    expect(await page.textContent("h1")).toBe("Stand-in customer portal");
    expect(standIn.requests.at(-1)).toMatchObject({ method: "GET", path: "/v1/subscriptions/8181" });
    expect(web.violations).toEqual([]);
    await context.close();
  }, 30_000);

  test("the sixth plan action in a minute is refused with the wait message", async () => {
    const { page, context } = await web.signedInPage({ plan: "free" });
    // The limit counts in fixed minute windows: six actions that straddle a minute's end are two
    // windows' worth, and the sixth would pass. Start with enough of the minute left for them.
    const leftOfMinute = 60_000 - (Date.now() % 60_000);
    if (leftOfMinute < 20_000) await Bun.sleep(leftOfMinute + 100);
    for (let i = 0; i < 5; i++) {
      await openAccount(page);
      await page.click('button:has-text("Choose Personal")');
      await page.waitForURL(new RegExp(`^${standIn.origin}/checkout/custom/`));
    }
    const sent = standIn.requests.length;
    await openAccount(page);
    await page.click('button:has-text("Choose Personal")');
    await page.waitForURL(/\/settings\?error=.*#plan$/);
    expect(await page.textContent(".flash.error")).toMatch(/^Too many attempts\. Please wait \d+ seconds and try again\.$/);
    expect(standIn.requests.length).toBe(sent);
    expect(web.violations).toEqual([]);
    await context.close();
  }, 50_000);

  test("the plan section on a phone: the tiers stack as cards, nothing serious for axe-core", async () => {
    const { page, context } = await web.signedInPage({ plan: "free", width: 390, height: 844 });
    await context.addInitScript({ path: AXE });
    await openAccount(page);
    const problems = await page.evaluate(async () => {
      const r = await axe.run(document.getElementById("plan"), { resultTypes: ["violations"] });
      return r.violations.filter((v: any) => v.impact === "serious" || v.impact === "critical").map((v: any) => v.id);
    });
    expect(problems).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    expect(await page.isVisible('button:has-text("Choose Team")')).toBe(true);
    await context.close();
  }, 30_000);
});
