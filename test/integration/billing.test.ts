import { createHmac } from "node:crypto";
import { afterEach, describe, expect, test } from "bun:test";
import { asc, count, eq } from "drizzle-orm";
import { UsageError } from "../../src/cli/args";
import { billingBind, billingCheckout } from "../../src/cli/commands";
import { ConfigError, loadConfig } from "../../src/config";
import { billingCheckouts, billingEvents, billingSubscriptions, workspaces } from "../../src/db/tables";
import type { PlanName } from "../../src/limits/plans";
import { subscribe } from "../../src/modules/accounts/lifecycle";
import { AppError } from "../../src/http/errors";
import { startCheckout } from "../../src/modules/billing/service";
import { errorOf, harness, type Harness, type TestResponse } from "../helpers/harness";

const SECRET = "whsec_test";
const WEBHOOK = "/webhooks/lemonsqueezy";
const VARIANT = { personal: 111, dev: 222, team: 333 } as const;

let h: Harness;
afterEach(async () => {
  // Lets the error log's fire-and-forget writes commit before the database closes.
  await new Promise((resolve) => setImmediate(resolve));
  await h.deps.writer.idle();
  await h.close();
});

const BILLING_ENV = {
  NOTESTREAM_BILLING_SECRET: SECRET,
  NOTESTREAM_BILLING_VARIANTS: `${VARIANT.personal}:personal,${VARIANT.dev}:dev,${VARIANT.team}:team`,
  NOTESTREAM_BILLING_CHECKOUT_URLS:
    "personal=https://shop.example.com/checkout/buy/p-uuid,dev=https://shop.example.com/checkout/buy/d-uuid?embed=1,team=https://shop.example.com/checkout/buy/t-uuid",
};
const billingHarness = () => harness({ env: BILLING_ENV });

const sign = (raw: string, secret = SECRET) => createHmac("sha256", secret).update(raw).digest("hex");

let delivery = 0;
// Distinct deliveries differ in updated_at, as real ones do.
const nextUpdatedAt = () => new Date(Date.parse("2026-11-22T10:00:00Z") + ++delivery * 1000).toISOString();

interface EventOpts {
  subscription?: string;
  variantId?: number;
  status?: string;
  email?: string;
  custom?: Record<string, unknown> | null;
}

/** A Lemon Squeezy subscription event, as the exact string that is sent and signed. */
function event(name: string, opts: EventOpts = {}): string {
  return JSON.stringify({
    meta: { event_name: name, ...(opts.custom ? { custom_data: opts.custom } : {}) },
    data: {
      id: opts.subscription ?? "1",
      type: "subscriptions",
      attributes: {
        status: opts.status ?? "active",
        customer_id: 4242,
        user_email: opts.email ?? "nobody@example.com",
        variant_id: opts.variantId ?? VARIANT.dev,
        // Names are the store's display text and never decide a plan.
        variant_name: "Team",
        product_name: "notestream Team",
        updated_at: nextUpdatedAt(),
      },
    },
  });
}

/** A payment event: its data is an invoice that names its subscription as a number. */
function invoice(name: string, subscription: string): string {
  return JSON.stringify({
    meta: { event_name: name },
    data: {
      id: String(90000 + delivery),
      type: "subscription-invoices",
      attributes: { subscription_id: Number(subscription), customer_id: 4242, status: "paid", updated_at: nextUpdatedAt() },
    },
  });
}

function deliver(raw: string, opts: { signature?: string | null; ip?: string } = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  const signature = opts.signature === undefined ? sign(raw) : opts.signature;
  if (signature !== null) headers["x-signature"] = signature;
  return h.request("POST", WEBHOOK, { body: raw, headers, ip: opts.ip });
}

/** What the buyer's checkout link carries back in custom_data. */
async function checkoutFor(workspaceId: string, plan: PlanName = "dev"): Promise<string> {
  const url = await h.deps.writer.write(() => startCheckout(h.deps, workspaceId, plan));
  return new URL(url).searchParams.get("checkout[custom][checkout_id]")!;
}

/** A workspace subscribed the only way there is: a checkout started here, then subscription_created. */
async function subscribed(workspaceId: string, subscription: string, plan: keyof typeof VARIANT = "dev"): Promise<void> {
  const checkout_id = await checkoutFor(workspaceId, plan);
  const res = await deliver(event("subscription_created", { subscription, variantId: VARIANT[plan], custom: { checkout_id } }));
  expect(await res.json()).toMatchObject({ applied: true });
}

async function workspace(id: string) {
  const [ws] = await h.deps.db
    .select({ plan: workspaces.plan, state: workspaces.state, last_payment_at: workspaces.lastPaymentAt, billing_subscription_id: workspaces.billingSubscriptionId })
    .from(workspaces)
    .where(eq(workspaces.id, id));
  return ws!;
}

const billingEventCount = async () => (await h.deps.db.select({ n: count() }).from(billingEvents))[0]!.n;
const bindings = () =>
  h.deps.db
    .select({
      id: billingSubscriptions.id,
      workspace_id: billingSubscriptions.workspaceId,
      customer_id: billingSubscriptions.customerId,
      variant_id: billingSubscriptions.variantId,
      checkout_id: billingSubscriptions.checkoutId,
    })
    .from(billingSubscriptions)
    .orderBy(asc(billingSubscriptions.id));

async function expectError(res: TestResponse, status: number, code: string) {
  expect(res.status).toBe(status);
  expect((await errorOf(res)).code).toBe(code);
}

describe("the signature", () => {
  test("a delivery without X-Signature is 401 and changes nothing", async () => {
    h = await billingHarness();
    const a = await h.account("free");
    const raw = event("subscription_created", { custom: { checkout_id: await checkoutFor(a.workspaceId) } });
    await expectError(await deliver(raw, { signature: null }), 401, "unauthorized");
    expect(await workspace(a.workspaceId)).toMatchObject({ plan: "free", state: "active" });
    expect(await billingEventCount()).toBe(0);
  });

  test("a tampered body with the old signature is 401 and changes nothing", async () => {
    h = await billingHarness();
    const a = await h.account("free");
    const other = await h.account("free");
    const otherCheckout = await checkoutFor(other.workspaceId);
    const raw = event("subscription_created", { custom: { checkout_id: otherCheckout } });
    const tampered = raw.replace(otherCheckout, await checkoutFor(a.workspaceId));
    expect(tampered).not.toBe(raw);
    await expectError(await deliver(tampered, { signature: sign(raw) }), 401, "unauthorized");
    // Signed with another secret, or not hex at all.
    await expectError(await deliver(raw, { signature: sign(raw, "whsec_other") }), 401, "unauthorized");
    await expectError(await deliver(raw, { signature: "not-a-signature" }), 401, "unauthorized");
    expect((await workspace(a.workspaceId)).plan).toBe("free");
    expect((await workspace(other.workspaceId)).plan).toBe("free");
    expect(await billingEventCount()).toBe(0);
    // The untouched delivery is accepted.
    expect((await deliver(raw)).status).toBe(200);
    expect((await workspace(other.workspaceId)).plan).toBe("dev");
  });

  test("without NOTESTREAM_BILLING_SECRET every delivery is 401", async () => {
    h = await harness({ env: { ...BILLING_ENV, NOTESTREAM_BILLING_SECRET: "" } });
    const a = await h.account("free");
    const res = await deliver(event("subscription_created", { custom: { checkout_id: await checkoutFor(a.workspaceId) } }));
    await expectError(res, 401, "unauthorized");
    expect((await workspace(a.workspaceId)).plan).toBe("free");
  });

  test("a signed body that is not JSON is 400", async () => {
    h = await billingHarness();
    const res = await deliver('{"meta": ');
    await expectError(res, 400, "bad_request");
    await expectError(await deliver("not json at all"), 400, "bad_request");
    expect(await billingEventCount()).toBe(0);
  });

  test("a signed JSON body that is not an object (null, a number, an array) is 400", async () => {
    h = await billingHarness();
    await expectError(await deliver("null"), 400, "bad_request");
    await expectError(await deliver("42"), 400, "bad_request");
    await expectError(await deliver("[1, 2]"), 400, "bad_request");
    expect(await billingEventCount()).toBe(0);
  });

  test("a body over 1 MB is 413 payload_too_large", async () => {
    h = await billingHarness();
    const a = await h.account("free");
    const created = JSON.parse(event("subscription_created", { custom: { checkout_id: await checkoutFor(a.workspaceId) } }));
    const big = JSON.stringify({ ...created, padding: "x".repeat(1024 * 1024) });
    await expectError(await deliver(big), 413, "payload_too_large");
    // Also when announced by Content-Length.
    const res = await h.request("POST", WEBHOOK, { body: big, headers: { "x-signature": sign(big), "content-length": String(big.length) } });
    await expectError(res, 413, "payload_too_large");
    expect((await workspace(a.workspaceId)).plan).toBe("free");
  });
});

describe("checkouts", () => {
  test("a checkout started for a workspace, then subscription_created, sets the plan and binds the subscription", async () => {
    h = await billingHarness();
    const a = await h.account("free");
    await expect(h.token(a)).rejects.toThrow(/no API access/);
    const url = await h.deps.writer.write(() => startCheckout(h.deps, a.workspaceId, "dev"));
    expect(url).toStartWith("https://shop.example.com/checkout/buy/d-uuid?embed=1&checkout[custom][checkout_id]=chk_");
    const checkout_id = new URL(url).searchParams.get("checkout[custom][checkout_id]")!;

    const res = await deliver(event("subscription_created", { subscription: "5001", variantId: VARIANT.dev, custom: { checkout_id } }));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, applied: true, event: "subscription_created" });
    expect(await workspace(a.workspaceId)).toMatchObject({ plan: "dev", state: "active", billing_subscription_id: "5001" });
    expect(await bindings()).toEqual([{ id: "5001", workspace_id: a.workspaceId, customer_id: "4242", variant_id: VARIANT.dev, checkout_id }]);
    const token = await h.token(a);
    const acct = await (await h.request("GET", "/api/v1/account", { token })).json();
    expect(acct).toMatchObject({ plan: "dev", state: "active", api_access: true });
  });

  test("the plan comes from the variant id: the Personal variant with custom_data.plan team gives Personal", async () => {
    h = await billingHarness();
    const a = await h.account("free");
    const checkout_id = await checkoutFor(a.workspaceId, "personal");
    const raw = event("subscription_created", { variantId: VARIANT.personal, custom: { checkout_id, plan: "team", workspace_id: a.workspaceId } });
    expect(await (await deliver(raw)).json()).toMatchObject({ applied: true });
    expect(await workspace(a.workspaceId)).toMatchObject({ plan: "personal", state: "active" });
  });

  test("a victim's workspace_id or account_id in custom_data, without a checkout started here, changes nothing", async () => {
    h = await billingHarness();
    const victim = await h.account("free");
    for (const custom of [
      { workspace_id: victim.workspaceId, account_id: victim.accountId, plan: "team" },
      { checkout_id: "chk_madeUpByTheBuyer0000000000", workspace_id: victim.workspaceId },
      null,
    ]) {
      const res = await deliver(event("subscription_created", { subscription: "6001", variantId: VARIANT.team, email: victim.email, custom }));
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ ok: true, applied: false, reason: expect.stringContaining("checkout") });
    }
    expect(await workspace(victim.workspaceId)).toMatchObject({ plan: "free", state: "active", billing_subscription_id: null });
    expect(await bindings()).toEqual([]);
  });

  test("the buyer's own checkout with a victim's workspace_id subscribes the buyer, not the victim", async () => {
    h = await billingHarness();
    const buyer = await h.account("free");
    const victim = await h.account("free");
    const checkout_id = await checkoutFor(buyer.workspaceId, "team");
    await deliver(event("subscription_created", { variantId: VARIANT.team, custom: { checkout_id, workspace_id: victim.workspaceId } }));
    expect((await workspace(buyer.workspaceId)).plan).toBe("team");
    expect((await workspace(victim.workspaceId)).plan).toBe("free");
  });

  test("a checkout id cannot be used twice", async () => {
    h = await billingHarness();
    const a = await h.account("free");
    const checkout_id = await checkoutFor(a.workspaceId);
    await deliver(event("subscription_created", { subscription: "7001", custom: { checkout_id } }));
    await deliver(event("subscription_expired", { subscription: "7001", status: "expired" }));
    expect(await workspace(a.workspaceId)).toMatchObject({ plan: "dev", state: "read_only" });

    const again = await deliver(event("subscription_created", { subscription: "7002", variantId: VARIANT.team, custom: { checkout_id } }));
    expect(await again.json()).toMatchObject({ applied: false, reason: expect.stringContaining("already been used") });
    expect(await workspace(a.workspaceId)).toMatchObject({ plan: "dev", state: "read_only", billing_subscription_id: "7001" });
    expect(await bindings()).toHaveLength(1);
  });

  test("a checkout older than 7 days changes nothing", async () => {
    h = await billingHarness();
    const a = await h.account("free");
    const checkout_id = await checkoutFor(a.workspaceId);
    h.clock.advance(7 * 86_400_000 + 1);
    const res = await deliver(event("subscription_created", { custom: { checkout_id } }));
    expect(await res.json()).toMatchObject({ applied: false, reason: expect.stringContaining("7 days") });
    expect((await workspace(a.workspaceId)).plan).toBe("free");
  });

  test("an unknown variant changes nothing; the same delivery resent once the variant is configured applies", async () => {
    h = await billingHarness();
    const a = await h.account("free");
    const checkout_id = await checkoutFor(a.workspaceId, "team");
    const raw = event("subscription_created", { subscription: "8001", variantId: 999999, custom: { checkout_id } });
    const res = await deliver(raw);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, applied: false, reason: "variant 999999 is not in NOTESTREAM_LEMONSQUEEZY_VARIANTS or NOTESTREAM_BILLING_VARIANTS" });
    expect(await workspace(a.workspaceId)).toMatchObject({ plan: "free", billing_subscription_id: null });
    expect(await bindings()).toEqual([]);
    expect(await billingEventCount()).toBe(0);

    // The operator adds the variant and restarts; the store's "resend" sends the same body.
    await h.stop();
    h = await harness({ dataDir: h.dataDir, clock: h.clock, env: { ...BILLING_ENV, NOTESTREAM_BILLING_VARIANTS: `${BILLING_ENV.NOTESTREAM_BILLING_VARIANTS},999999:team` } });
    expect(await (await deliver(raw)).json()).toMatchObject({ applied: true });
    expect(await workspace(a.workspaceId)).toMatchObject({ plan: "team", billing_subscription_id: "8001" });
    expect(await (await deliver(raw)).json()).toMatchObject({ replay: true });
  });

  test("notestream billing checkout prints the link on stdout, for the account or a team it belongs to", async () => {
    h = await billingHarness();
    const owner = await h.account("free", "owner@example.com");
    await h.account("free", "member@example.com");
    const outsider = await h.account("free", "outsider@example.com");
    const teamId = await h.team(owner.email, ["member@example.com"]);
    const run = async (argv: string[]) => {
      const out: string[] = [];
      await billingCheckout(h.deps, argv, { out: (l) => out.push(l), info: () => {} });
      return out;
    };

    const [personal] = await run(["--email", "owner@example.com", "--plan", "personal"]);
    expect(personal).toMatch(/^https:\/\/shop\.example\.com\/checkout\/buy\/p-uuid\?checkout\[custom\]\[checkout_id\]=chk_\w+$/);
    const [team] = await run(["--email", "member@example.com", "--plan", "team", "--team", teamId]);
    // Made in this order at the same (fake) time: the plan orders them as they were made.
    const rows = await h.deps.db
      .select({ workspace_id: billingCheckouts.workspaceId, plan: billingCheckouts.plan, used_at: billingCheckouts.usedAt })
      .from(billingCheckouts)
      .orderBy(asc(billingCheckouts.createdAt), asc(billingCheckouts.plan));
    expect(rows).toEqual([
      { workspace_id: owner.workspaceId, plan: "personal", used_at: null },
      { workspace_id: teamId, plan: "team", used_at: null },
    ]);
    await deliver(event("subscription_created", { variantId: VARIANT.team, custom: { checkout_id: new URL(team!).searchParams.get("checkout[custom][checkout_id]") } }));
    expect((await workspace(teamId)).plan).toBe("team");
    expect((await workspace(owner.workspaceId)).plan).toBe("free");

    await expect(run(["--email", outsider.email, "--plan", "team", "--team", teamId])).rejects.toMatchObject({ code: "not_found", message: `${outsider.email} is not a member of team ${teamId}` });
    await expect(run(["--email", owner.email, "--plan", "free"])).rejects.toBeInstanceOf(UsageError);
    await expect(run(["--email", owner.email])).rejects.toBeInstanceOf(UsageError);
    // dev_pro is a plan name, but this store sells no such checkout.
    await expect(run(["--email", owner.email, "--plan", "dev_pro"])).rejects.toBeInstanceOf(AppError);
    await expect(run(["--email", owner.email, "--plan", "dev_pro"])).rejects.toMatchObject({ code: "bad_request" });
  });
});

describe("subscription events", () => {
  test("subscription_expired of an unrelated subscription carrying the victim's user_email leaves the victim active", async () => {
    h = await billingHarness();
    const victim = await h.account("free", "victim@example.com");
    await subscribed(victim.workspaceId, "1001");
    const res = await deliver(event("subscription_expired", { subscription: "9999", status: "expired", email: "victim@example.com", custom: { workspace_id: victim.workspaceId } }));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, applied: false, reason: "subscription 9999 is not bound to any workspace" });
    expect(await workspace(victim.workspaceId)).toMatchObject({ plan: "dev", state: "active" });
  });

  test("subscription_expired of the bound subscription makes the workspace read-only", async () => {
    h = await billingHarness();
    const a = await h.account("free");
    await subscribed(a.workspaceId, "1002");
    const token = await h.token(a);
    const res = await deliver(event("subscription_expired", { subscription: "1002", status: "expired" }));
    expect(await res.json()).toMatchObject({ applied: true, event: "subscription_expired" });
    expect((await workspace(a.workspaceId)).state).toBe("read_only");
    expect((await h.request("GET", "/api/v1/notes", { token })).status).toBe(200);
    await expectError(await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "x" } } }), 403, "account_read_only");
  });

  test("subscription_payment_success of the bound subscription brings a read-only workspace back and dates the payment", async () => {
    h = await billingHarness();
    const a = await h.account("free");
    await subscribed(a.workspaceId, "1003");
    const token = await h.token(a);
    await deliver(event("subscription_expired", { subscription: "1003", status: "expired" }));
    expect((await workspace(a.workspaceId)).state).toBe("read_only");
    const raw = invoice("subscription_payment_success", "1003");
    const res = await deliver(raw);
    expect(await res.json()).toMatchObject({ applied: true });
    expect(await workspace(a.workspaceId)).toMatchObject({
      plan: "dev",
      state: "active",
      last_payment_at: Date.parse(JSON.parse(raw).data.attributes.updated_at),
    });
    expect((await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "x" } } })).status).toBe(201);
  });

  test("a subscription from before bound checkouts is bound by the operator (billing bind); its events then act on that workspace only", async () => {
    h = await billingHarness();
    const a = await h.account("dev", "early@example.com");
    const other = await h.account("dev", "other@example.com");
    const run = async (argv: string[]) => {
      const out: string[] = [];
      await billingBind(h.deps, argv, { out: (l) => out.push(l), info: () => {} });
      return out;
    };
    // Unbound, its expiry changes nothing: the state an upgrade leaves old subscribers in.
    expect(await (await deliver(event("subscription_expired", { subscription: "777", status: "expired" }))).json()).toMatchObject({ applied: false });
    expect(await run(["--email", "early@example.com", "--subscription", "777", "--variant", String(VARIANT.dev), "--customer", "4242"])).toEqual([a.workspaceId]);
    expect(await bindings()).toEqual([{ id: "777", workspace_id: a.workspaceId, customer_id: "4242", variant_id: VARIANT.dev, checkout_id: "operator:777" }]);
    expect(await (await deliver(event("subscription_expired", { subscription: "777", status: "expired" }))).json()).toMatchObject({ applied: true });
    expect((await workspace(a.workspaceId)).state).toBe("read_only");
    expect((await workspace(other.workspaceId)).state).toBe("active");
    await expect(run(["--email", "other@example.com", "--subscription", "777", "--variant", String(VARIANT.dev)])).rejects.toMatchObject({ code: "conflict", message: "subscription 777 is already bound" });
    await expect(run(["--email", "other@example.com", "--subscription", "778", "--variant", "1"])).rejects.toMatchObject({ code: "bad_request", message: "variant 1 is not in NOTESTREAM_LEMONSQUEEZY_VARIANTS or NOTESTREAM_BILLING_VARIANTS" });
    await expect(run(["--email", "other@example.com", "--subscription", "778", "--variant", "dev"])).rejects.toBeInstanceOf(UsageError);
  });

  test("a payment of an unknown subscription changes nothing", async () => {
    h = await billingHarness();
    const a = await h.account("free");
    await subscribed(a.workspaceId, "1004");
    await deliver(event("subscription_expired", { subscription: "1004", status: "expired" }));
    const res = await deliver(invoice("subscription_payment_recovered", "1005"));
    expect(await res.json()).toMatchObject({ ok: true, applied: false, reason: "subscription 1005 is not bound to any workspace" });
    expect(await workspace(a.workspaceId)).toMatchObject({ state: "read_only", last_payment_at: null });
  });

  test("subscription_updated to another variant changes the plan by the variant map; an unknown variant changes nothing", async () => {
    h = await billingHarness();
    const a = await h.account("free");
    await subscribed(a.workspaceId, "1006");
    expect(await (await deliver(event("subscription_updated", { subscription: "1006", variantId: VARIANT.team }))).json()).toMatchObject({ applied: true });
    expect((await workspace(a.workspaceId)).plan).toBe("team");
    expect(await bindings()).toMatchObject([{ id: "1006", variant_id: VARIANT.team }]);
    const unknown = await deliver(event("subscription_updated", { subscription: "1006", variantId: 424242 }));
    expect(await unknown.json()).toMatchObject({ applied: false, reason: expect.stringContaining("424242") });
    expect((await workspace(a.workspaceId)).plan).toBe("team");
  });

  test("the expiry of a subscription a later one replaced leaves the workspace active", async () => {
    h = await billingHarness();
    const a = await h.account("free");
    await subscribed(a.workspaceId, "1007");
    await subscribed(a.workspaceId, "1008", "team");
    const res = await deliver(event("subscription_expired", { subscription: "1007", status: "expired" }));
    expect(await res.json()).toMatchObject({ applied: false, reason: "subscription 1007 was replaced by a later one" });
    expect(await workspace(a.workspaceId)).toMatchObject({ plan: "team", state: "active", billing_subscription_id: "1008" });
  });

  test("a replayed delivery answers 200 with replay: true and changes nothing", async () => {
    h = await billingHarness();
    const a = await h.account("free");
    const created = event("subscription_created", { subscription: "1009", custom: { checkout_id: await checkoutFor(a.workspaceId) } });
    expect((await (await deliver(created)).json()).applied).toBe(true);
    expect((await (await deliver(event("subscription_expired", { subscription: "1009", status: "expired" }))).json()).applied).toBe(true);
    expect(await workspace(a.workspaceId)).toMatchObject({ plan: "dev", state: "read_only" });

    const replay = await deliver(created);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ ok: true, applied: false, replay: true });
    expect(await workspace(a.workspaceId)).toMatchObject({ plan: "dev", state: "read_only" });
    expect(await billingEventCount()).toBe(2);
  });

  test("subscription_expired for a workspace moved to the free plan since is acknowledged, not a 500", async () => {
    h = await billingHarness();
    const a = await h.account("free");
    await subscribed(a.workspaceId, "1010");
    await h.deps.writer.write(() => subscribe(h.deps, a.workspaceId, "free"));
    const raw = event("subscription_expired", { subscription: "1010", status: "expired" });
    const res = await deliver(raw);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, applied: false });
    expect(await workspace(a.workspaceId)).toMatchObject({ plan: "free", state: "active" });
    // Acknowledged once: a redelivery is a replay.
    expect(await (await deliver(raw)).json()).toMatchObject({ replay: true });
  });

  test("subscription_cancelled changes nothing", async () => {
    h = await billingHarness();
    const a = await h.account("free");
    await subscribed(a.workspaceId, "1011");
    const res = await deliver(event("subscription_cancelled", { subscription: "1011", status: "cancelled" }));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, applied: false });
    expect(await workspace(a.workspaceId)).toMatchObject({ plan: "dev", state: "active" });
  });
});

describe("configuration", () => {
  test("variants and checkout links are read as id:plan and plan=URL; bad values are clear errors", () => {
    const c = loadConfig(BILLING_ENV);
    expect([...c.billingVariants]).toEqual([[111, "personal"], [222, "dev"], [333, "team"]]);
    expect(c.billingCheckoutUrls.get("dev")).toBe("https://shop.example.com/checkout/buy/d-uuid?embed=1");
    expect(loadConfig({ NOTESTREAM_BILLING_VARIANTS: "1:paid, 2:dev_pro" }).billingVariants.get(2)).toBe("dev_pro");
    const bad = (env: Record<string, string>, message: RegExp) => expect(() => loadConfig(env)).toThrow(message);
    bad({ NOTESTREAM_BILLING_VARIANTS: "dev:123" }, /variant_id:plan/);
    bad({ NOTESTREAM_BILLING_VARIANTS: "123:gold" }, /not a paid plan/);
    bad({ NOTESTREAM_BILLING_VARIANTS: "123:free" }, /not a paid plan/);
    bad({ NOTESTREAM_BILLING_VARIANTS: "123:dev,123:team" }, /two plans/);
    bad({ NOTESTREAM_BILLING_VARIANTS: "123:dev", NOTESTREAM_BILLING_CHECKOUT_URLS: "dev=shop.example.com/x" }, /http\(s\) URL/);
    // A link whose purchases the webhook would not recognise.
    bad({ NOTESTREAM_BILLING_VARIANTS: "123:dev", NOTESTREAM_BILLING_CHECKOUT_URLS: "team=https://shop.example.com/t" }, /no variant .* sells team/);
    expect(() => loadConfig({ NOTESTREAM_BILLING_VARIANTS: "x" })).toThrow(ConfigError);
  });
});

describe("rate limit", () => {
  test("100 deliveries a minute per address: the 101st is 429 with Retry-After, another address still gets through", async () => {
    h = await billingHarness();
    const a = await h.account("free");
    const custom = { checkout_id: await checkoutFor(a.workspaceId) };
    for (let i = 0; i < 100; i++) {
      const res = await deliver("{}", { signature: null, ip: "203.0.113.7" });
      expect(res.status).toBe(401);
    }
    const limited = await deliver(event("subscription_created", { custom }), { ip: "203.0.113.7" });
    await expectError(limited, 429, "rate_limited");
    const retry = Number(limited.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect((await workspace(a.workspaceId)).plan).toBe("free");

    const other = await deliver(event("subscription_created", { custom }), { ip: "198.51.100.2" });
    expect(other.status).toBe(200);
    expect((await workspace(a.workspaceId)).plan).toBe("dev");
    // The next minute the first address gets through again.
    h.clock.advance(60_000);
    expect((await deliver(event("subscription_cancelled", { status: "cancelled" }), { ip: "203.0.113.7" })).status).toBe(200);
  });
});
