import { afterEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accountSetPlan, billingCheckout } from "../../src/cli/commands";
import { ConfigError, loadConfig } from "../../src/config";
import { notes, workspaces } from "../../src/db/tables";
import type { PlanName } from "../../src/limits/plans";
import { findAccountByEmail } from "../../src/modules/accounts/service";
import { createProviderCheckout, customerPortalUrl } from "../../src/modules/billing/provider";
import { getWorkspace } from "../../src/modules/workspaces/repo";
import { createSession } from "../../src/web/session";
import { FormBrowser } from "../helpers/form-browser";
import { harness, type Harness } from "../helpers/harness";
import { billingEnv, LS_KEY, LS_STORE, LS_VARIANTS, providerStandIn, subscriptionCreated, type ProviderStandIn } from "../helpers/lemonsqueezy";

let h: Harness;
let standIn: ProviderStandIn | null = null;
let n = 0;
afterEach(async () => {
  await h.close();
  standIn?.stop();
  standIn = null;
});

function withBilling(): Promise<Harness> {
  standIn = providerStandIn();
  return harness({ env: billingEnv(standIn) });
}

/** A browser signed in to a new account (its session made directly, as the pages' tests do). */
async function signedIn(plan: PlanName) {
  const a = await h.account(plan);
  const { secret } = await createSession(h.deps, (await findAccountByEmail(h.deps, a.email))!);
  const b = new FormBrowser(h, `203.0.113.${++n}`);
  b.cookies.set("ns_session", secret);
  return { ...a, b };
}

/** The plan section of the account page: the Plan card, up to the next card. */
async function planSectionOf(b: FormBrowser): Promise<string> {
  const page = (await b.get("/settings")).text;
  const start = page.indexOf('id="plan"');
  return page.slice(start, page.indexOf('<div class="card', start + 10));
}

async function post(b: FormBrowser, action: string, fields: Record<string, string> = {}) {
  return b.submit("/settings", action, fields);
}

const errorIn = (location: string) => new URL(location, "http://x").searchParams.get("error");

describe("the plan section without billing (self-hosting)", () => {
  test("lists the profile's tiers with their caps, marks the current one, says to use set-plan and has no buttons", async () => {
    h = await harness();
    const a = await signedIn("personal");
    const section = await planSectionOf(a.b);
    for (const tier of ["Free", "Personal", "Dev", "Team"]) expect(section).toContain(`<td data-label="Plan">${tier}`);
    expect(section).toContain('Personal<span class="badge ok">your plan</span>');
    expect(section).toContain("1,000 rich + 10,000 plain");
    expect(section).toContain("15.0 GB");
    expect(section).toContain(`notestream account set-plan --email ${a.email} --plan dev`);
    expect(section).not.toContain("/settings/plan/checkout");
    expect(section).not.toContain("Manage billing");
    const r = await post(a.b, "/settings/plan/checkout", { plan: "dev" });
    expect(errorIn(r.location)).toContain("Billing is not set up on this server");
  });

  test("the alternate profile lists its own tiers", async () => {
    h = await harness({ profile: "alternate" });
    const a = await signedIn("dev_pro");
    const section = await planSectionOf(a.b);
    for (const tier of ["Free", "Paid", "Dev", "Dev-pro"]) expect(section).toContain(`<td data-label="Plan">${tier}`);
    expect(section).toContain('Dev-pro<span class="badge ok">your plan</span>');
  });
});

describe("plans with billing on (against a stand-in for Lemon Squeezy's API)", () => {
  test("a checkout is created by the service with the workspace, store and variant bound, and the browser is sent to its URL", async () => {
    h = await withBilling();
    const a = await signedIn("free");
    const section = await planSectionOf(a.b);
    expect(section).toContain('<input type="hidden" name="plan" value="dev">');
    expect(section).not.toContain('name="plan" value="free"');
    const r = await post(a.b, "/settings/plan/checkout", { plan: "dev" });
    expect(r.location).toBe("/settings/plan/continue");

    const [sent] = standIn!.requests;
    expect(sent!.method).toBe("POST");
    expect(sent!.path).toBe("/v1/checkouts");
    expect(sent!.headers.authorization).toBe(`Bearer ${LS_KEY}`);
    expect(sent!.headers["content-type"]).toBe("application/vnd.api+json");
    const data = sent!.body.data;
    expect(data.type).toBe("checkouts");
    expect(data.relationships.store.data).toEqual({ type: "stores", id: LS_STORE });
    expect(data.relationships.variant.data).toEqual({ type: "variants", id: String(LS_VARIANTS.dev) });
    expect(data.attributes.product_options.enabled_variants).toEqual([LS_VARIANTS.dev]);
    expect(data.attributes.checkout_data.email).toBe(a.email);
    expect(data.attributes.checkout_data.custom.workspace_id).toBe(a.workspaceId);
    expect(data.attributes.checkout_data.custom.checkout_id).toMatch(/^chk_/);
    expect(Date.parse(data.attributes.expires_at) - h.clock.now()).toBe(7 * 86_400_000);

    const onward = await a.b.get(r.location);
    expect(onward.status).toBe(200);
    expect(onward.headers.get("refresh")).toBe(`0; url=${standIn!.origin}/checkout/custom/0000-checkout-1?signature=s1`);
    expect(onward.text).toContain(`href="${standIn!.origin}/checkout/custom/0000-checkout-1?signature=s1"`);
    // Once: a reload goes back to the account page.
    expect((await a.b.get(r.location)).headers.get("location")).toBe("/settings#plan");

    // The store's subscription_created for that checkout moves the plan; the portal follows.
    const event = subscriptionCreated(sent!, "5151");
    const delivered = await h.request("POST", "/webhooks/lemonsqueezy", { body: event.body, headers: { "x-signature": event.signature, "content-type": "application/json" } });
    expect(await delivered.json()).toMatchObject({ applied: true, event: "subscription_created" });
    expect(await getWorkspace(h.deps, a.workspaceId)).toMatchObject({ plan: "dev", state: "active", billingSubscriptionId: "5151" });

    const after = await planSectionOf(a.b);
    expect(after).toContain('Dev<span class="badge ok">your plan</span>');
    expect(after).not.toContain("/settings/plan/checkout");
    expect(after).toContain("Manage billing");
    const portal = await post(a.b, "/settings/plan/portal");
    expect(standIn!.requests.at(-1)).toMatchObject({ method: "GET", path: "/v1/subscriptions/5151" });
    expect((await a.b.get(portal.location)).headers.get("refresh")).toBe(`0; url=${standIn!.origin}/billing?subscription=5151&signature=p`);
  });

  test("a running subscription is changed at the portal: a second checkout is refused", async () => {
    h = await withBilling();
    const a = await signedIn("free");
    await post(a.b, "/settings/plan/checkout", { plan: "personal" });
    const event = subscriptionCreated(standIn!.requests[0]!, "6161");
    await h.request("POST", "/webhooks/lemonsqueezy", { body: event.body, headers: { "x-signature": event.signature } });
    const r = await post(a.b, "/settings/plan/checkout", { plan: "dev" });
    expect(errorIn(r.location)).toBe("This workspace already has a subscription: change or cancel it with Manage billing.");
    expect(standIn!.requests.length).toBe(1);
  });

  test("the sixth plan action in a minute is refused with the wait message, and reaches no provider", async () => {
    h = await withBilling();
    const a = await signedIn("free");
    for (let i = 0; i < 5; i++) expect((await post(a.b, "/settings/plan/checkout", { plan: "dev" })).location).toBe("/settings/plan/continue");
    const sixth = await post(a.b, "/settings/plan/checkout", { plan: "dev" });
    expect(errorIn(sixth.location)).toMatch(/^Too many attempts\. Please wait \d+ seconds and try again\.$/);
    expect(sixth.location).toEndWith("#plan");
    expect(standIn!.requests.length).toBe(5);
    // The portal shares the budget; a minute later it is back.
    expect(errorIn((await post(a.b, "/settings/plan/portal")).location)).toStartWith("Too many attempts.");
    h.clock.advance(61_000);
    expect((await post(a.b, "/settings/plan/checkout", { plan: "dev" })).location).toBe("/settings/plan/continue");
  });

  test("the provider failing is a clear message on the account page, not a 500", async () => {
    h = await withBilling();
    const a = await signedIn("free");
    standIn!.failNext({ status: 500 });
    let r = await post(a.b, "/settings/plan/checkout", { plan: "dev" });
    expect(errorIn(r.location)).toBe("The payment provider is not answering properly (HTTP 500). Nothing was charged; please try again in a minute, and tell the operator if it keeps happening.");
    standIn!.failNext({ status: 422, body: JSON.stringify({ errors: [{ detail: "The variant is not published." }] }) });
    r = await post(a.b, "/settings/plan/checkout", { plan: "dev" });
    expect(errorIn(r.location)).toStartWith("The payment provider refused the request (HTTP 422).");
    standIn!.failNext("no-link");
    r = await post(a.b, "/settings/plan/checkout", { plan: "dev" });
    expect(errorIn(r.location)).toStartWith("The payment provider answered without the link it should have.");
    r = await post(a.b, "/settings/plan/checkout", { plan: "gold" });
    expect(errorIn(r.location)).toBe("The gold plan is not on sale here.");
    expect((await getWorkspace(h.deps, a.workspaceId)).plan).toBe("free");
  });

  test("a provider that does not answer in time, or sends a link that is not http(s), is refused", async () => {
    standIn = providerStandIn();
    h = await harness();
    const ls = loadConfig({ ...billingEnv(standIn) }).lemonSqueezy!;
    standIn.failNext("hang");
    const started = Date.now();
    await expect(
      createProviderCheckout(ls, { storeId: LS_STORE, variantId: LS_VARIANTS.dev, email: "a@example.com", custom: {}, redirectUrl: "http://x/", expiresAt: new Date() }, 200),
    ).rejects.toMatchObject({ code: "conflict", message: expect.stringContaining("did not answer in time") });
    expect(Date.now() - started).toBeLessThan(2000);
    standIn.failNext("no-link");
    await expect(customerPortalUrl(ls, "1")).rejects.toMatchObject({ message: expect.stringContaining("without the link") });
    await expect(customerPortalUrl({ ...ls, apiKey: "wrong" }, "1")).rejects.toMatchObject({ message: expect.stringContaining("refused the request (HTTP 401)") });
  });

  test("a team member sees no plan buttons and cannot start a checkout; the owner can", async () => {
    h = await withBilling();
    const owner = await signedIn("free");
    const member = await signedIn("free");
    const teamId = await h.team(owner.email, [member.email]);
    for (const who of [owner, member]) {
      const csrf = who.b.csrfOf((await who.b.get("/notes")).text);
      await who.b.post("/workspace", { _csrf: csrf, workspace_id: teamId, next: "/settings" });
    }
    const memberView = await planSectionOf(member.b);
    expect(memberView).toContain("The team's owner changes its plan and billing.");
    expect(memberView).not.toContain("/settings/plan/checkout");
    await h.deps.writer.write(async () => {
      await h.deps.db.update(workspaces).set({ plan: "free" }).where(eq(workspaces.id, teamId));
    });
    const refused = await post(member.b, "/settings/plan/checkout", { plan: "team" });
    expect(errorIn(refused.location)).toBe("Only the team's owner changes its plan and billing.");
    expect((await post(owner.b, "/settings/plan/checkout", { plan: "team" })).location).toBe("/settings/plan/continue");
    expect(standIn!.requests.at(-1)!.body.data.attributes.checkout_data.custom.workspace_id).toBe(teamId);
  });

  test("notestream billing checkout creates the checkout through the API too", async () => {
    h = await withBilling();
    const a = await h.account("free");
    const out: string[] = [];
    await billingCheckout(h.deps, ["--email", a.email, "--plan", "team"], { out: (s: string) => void out.push(s), info: () => {} });
    expect(out).toEqual([`${standIn!.origin}/checkout/custom/0000-checkout-1?signature=s1`]);
    expect(standIn!.requests[0]!.body.data.relationships.variant.data.id).toBe(String(LS_VARIANTS.team));
  });
});

describe("downgrades", () => {
  test("a dev account with tokens moved to free loses its tokens and keeps every note readable; new notes wait for room", async () => {
    h = await harness();
    const a = await signedIn("dev");
    const token = await h.token(a, ["read", "write", "append"]);
    for (let i = 0; i < 12; i++) {
      expect((await h.request("POST", "/api/v1/notes", { token, body: { note: { title: `n${i}`, plain_body: `body ${i}` } } })).status).toBe(201);
    }
    expect((await h.request("POST", "/api/v1/notes/by-filename/deploys.log/append", { token, body: { text: "deploy ok" } })).status).toBe(201);
    await accountSetPlan(h.deps, ["--email", a.email, "--plan", "free"], { out: () => {}, info: () => {} });

    expect((await h.request("GET", "/api/v1/notes", { token })).status).toBe(401);
    const ids = await h.deps.db.select({ id: notes.id }).from(notes).where(eq(notes.workspaceId, a.workspaceId));
    expect(ids.length).toBe(13);
    for (const { id } of ids) expect((await a.b.get(`/notes/${id}`)).status).toBe(200);
    const list = (await a.b.get("/notes")).text;
    expect(list).toContain("n11");
    // Over the free cap of 10: nothing new until there is room, and nothing was lost.
    const refused = await a.b.submit("/notes/new", "/notes/create", { title: "one more", format: "plain" });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain("the free plan allows 10 notes");
    expect((await h.deps.db.select({ id: notes.id }).from(notes).where(eq(notes.workspaceId, a.workspaceId))).length).toBe(13);
  });
});

describe("configuration", () => {
  const env = { NOTESTREAM_BILLING_SECRET: "s", NOTESTREAM_LEMONSQUEEZY_API_KEY: "k", NOTESTREAM_LEMONSQUEEZY_STORE_ID: "9" };
  test("NOTESTREAM_LEMONSQUEEZY_VARIANTS and NOTESTREAM_BILLING_VARIANTS are both read; for one variant the former wins", () => {
    const c = loadConfig({ ...env, NOTESTREAM_LEMONSQUEEZY_VARIANTS: "personal:1, dev:2", NOTESTREAM_BILLING_VARIANTS: "2:team,3:team,4:dev" });
    expect(c.lemonSqueezy).toEqual({ apiKey: "k", storeId: "9", apiUrl: "https://api.lemonsqueezy.com/v1", checkoutVariants: new Map<PlanName, number>([["personal", 1], ["dev", 2], ["team", 3]]) });
    expect([...c.billingVariants].sort((x, y) => x[0] - y[0])).toEqual([[1, "personal"], [2, "dev"], [3, "team"], [4, "dev"]]);
    // The old spelling alone still sells: the first variant of each plan.
    expect(loadConfig({ ...env, NOTESTREAM_BILLING_VARIANTS: "7:dev,8:dev" }).lemonSqueezy!.checkoutVariants).toEqual(new Map<PlanName, number>([["dev", 7]]));
    expect(loadConfig({ ...env, NOTESTREAM_LEMONSQUEEZY_VARIANTS: "dev:2", NOTESTREAM_LEMONSQUEEZY_API_URL: "http://127.0.0.1:9/v1/" }).lemonSqueezy!.apiUrl).toBe("http://127.0.0.1:9/v1");
    // Without the key billing is off; the variants still map the webhook's events.
    const off = loadConfig({ NOTESTREAM_LEMONSQUEEZY_VARIANTS: "dev:2" });
    expect([off.lemonSqueezy, off.billingVariants.get(2)]).toEqual([null, "dev"]);
  });

  test("half a billing setup is a clear error at start", () => {
    const bad = (e: Record<string, string>, message: RegExp) => expect(() => loadConfig(e)).toThrow(message);
    bad({ NOTESTREAM_LEMONSQUEEZY_STORE_ID: "9" }, /API_KEY is not/);
    bad({ ...env, NOTESTREAM_LEMONSQUEEZY_STORE_ID: "" }, /STORE_ID must be the store's number/);
    bad({ ...env }, /needs NOTESTREAM_LEMONSQUEEZY_VARIANTS/);
    bad({ ...env, NOTESTREAM_BILLING_SECRET: "", NOTESTREAM_LEMONSQUEEZY_VARIANTS: "dev:2" }, /needs NOTESTREAM_BILLING_SECRET/);
    bad({ ...env, NOTESTREAM_LEMONSQUEEZY_VARIANTS: "2:dev" }, /not plan:variant_id/);
    bad({ ...env, NOTESTREAM_LEMONSQUEEZY_VARIANTS: "dev:2,dev:3" }, /dev is given two variants/);
    bad({ ...env, NOTESTREAM_LEMONSQUEEZY_VARIANTS: "free:2" }, /not a paid plan/);
    bad({ ...env, NOTESTREAM_LEMONSQUEEZY_VARIANTS: "dev:2", NOTESTREAM_LEMONSQUEEZY_API_URL: "ftp://x" }, /API_URL must be an http\(s\) URL/);
    expect(() => loadConfig({ ...env })).toThrow(ConfigError);
  });
});
