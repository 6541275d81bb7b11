import { createHmac } from "node:crypto";
import { afterEach, describe, expect, test } from "bun:test";
import { errorOf, harness, type Harness, type TestResponse } from "../helpers/harness";

const SECRET = "whsec_test";
const WEBHOOK = "/webhooks/lemonsqueezy";

let h: Harness;
afterEach(async () => {
  // Lets the error log's fire-and-forget writes commit before the database closes.
  await new Promise((resolve) => setImmediate(resolve));
  await h.deps.writer.idle();
  await h.close();
});

const billingHarness = () => harness({ env: { NOTESTREAM_BILLING_SECRET: SECRET } });

const sign = (raw: string, secret = SECRET) => createHmac("sha256", secret).update(raw).digest("hex");

let delivery = 0;

/** A Lemon Squeezy subscription event, as the exact string that is sent and signed. */
function event(
  name: string,
  opts: { accountId?: string; email?: string; status?: string; variant?: string; custom?: Record<string, unknown> | null } = {},
): string {
  const custom = opts.custom !== undefined ? opts.custom : opts.accountId ? { account_id: opts.accountId } : null;
  return JSON.stringify({
    meta: { event_name: name, ...(custom ? { custom_data: custom } : {}) },
    data: {
      id: "1",
      type: "subscriptions",
      attributes: {
        status: opts.status ?? "active",
        user_email: opts.email ?? "nobody@example.com",
        variant_name: opts.variant ?? "Dev",
        // Distinct deliveries differ in updated_at, as real ones do.
        updated_at: new Date(Date.parse("2026-11-22T10:00:00Z") + ++delivery * 1000).toISOString(),
      },
    },
  });
}

function deliver(raw: string, opts: { signature?: string | null; ip?: string } = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  const signature = opts.signature === undefined ? sign(raw) : opts.signature;
  if (signature !== null) headers["x-signature"] = signature;
  return h.request("POST", WEBHOOK, { body: raw, headers, ip: opts.ip });
}

function workspace(id: string) {
  return h.deps.db.$client.query("SELECT plan, state, last_payment_at FROM workspaces WHERE id = ?").get(id) as {
    plan: string;
    state: string;
    last_payment_at: number | null;
  };
}

const billingEventCount = () => (h.deps.db.$client.query("SELECT count(*) AS n FROM billing_events").get() as { n: number }).n;

async function expectError(res: TestResponse, status: number, code: string) {
  expect(res.status).toBe(status);
  expect((await errorOf(res)).code).toBe(code);
}

describe("the signature", () => {
  test("a delivery without X-Signature is 401 and changes nothing", async () => {
    h = billingHarness();
    const a = await h.account("free");
    await expectError(await deliver(event("subscription_created", { accountId: a.accountId }), { signature: null }), 401, "unauthorized");
    expect(workspace(a.workspaceId)).toMatchObject({ plan: "free", state: "active" });
    expect(billingEventCount()).toBe(0);
  });

  test("a tampered body with the old signature is 401 and changes nothing", async () => {
    h = billingHarness();
    const a = await h.account("free");
    const other = await h.account("free");
    const raw = event("subscription_created", { accountId: other.accountId });
    const tampered = raw.replace(other.accountId, a.accountId);
    expect(tampered).not.toBe(raw);
    await expectError(await deliver(tampered, { signature: sign(raw) }), 401, "unauthorized");
    // Signed with another secret, or not hex at all.
    await expectError(await deliver(raw, { signature: sign(raw, "whsec_other") }), 401, "unauthorized");
    await expectError(await deliver(raw, { signature: "not-a-signature" }), 401, "unauthorized");
    expect(workspace(a.workspaceId).plan).toBe("free");
    expect(workspace(other.workspaceId).plan).toBe("free");
    expect(billingEventCount()).toBe(0);
    // The untouched delivery is accepted.
    expect((await deliver(raw)).status).toBe(200);
    expect(workspace(other.workspaceId).plan).toBe("dev");
  });

  test("without NOTESTREAM_BILLING_SECRET every delivery is 401", async () => {
    h = harness();
    const a = await h.account("free");
    const res = await deliver(event("subscription_created", { accountId: a.accountId }));
    await expectError(res, 401, "unauthorized");
    expect(workspace(a.workspaceId).plan).toBe("free");
  });

  test("a signed body that is not JSON is 400", async () => {
    h = billingHarness();
    const res = await deliver('{"meta": ');
    await expectError(res, 400, "bad_request");
    await expectError(await deliver("not json at all"), 400, "bad_request");
    expect(billingEventCount()).toBe(0);
  });

  test("a signed JSON body that is not an object (null, a number, an array) is 400", async () => {
    h = billingHarness();
    await expectError(await deliver("null"), 400, "bad_request");
    await expectError(await deliver("42"), 400, "bad_request");
    await expectError(await deliver("[1, 2]"), 400, "bad_request");
    expect(billingEventCount()).toBe(0);
  });

  test("a body over 1 MB is 413 payload_too_large", async () => {
    h = billingHarness();
    const a = await h.account("free");
    const big = JSON.stringify({ ...JSON.parse(event("subscription_created", { accountId: a.accountId })), padding: "x".repeat(1024 * 1024) });
    await expectError(await deliver(big), 413, "payload_too_large");
    // Also when announced by Content-Length.
    const res = await h.request("POST", WEBHOOK, { body: big, headers: { "x-signature": sign(big), "content-length": String(big.length) } });
    await expectError(res, 413, "payload_too_large");
    expect(workspace(a.workspaceId).plan).toBe("free");
  });
});

describe("subscription events", () => {
  test("subscription_created makes a free account Dev and active", async () => {
    h = billingHarness();
    const a = await h.account("free");
    await expect(h.token(a)).rejects.toThrow(/no API access/);
    const res = await deliver(event("subscription_created", { accountId: a.accountId, variant: "Dev" }));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, applied: true, event: "subscription_created" });
    expect(workspace(a.workspaceId)).toMatchObject({ plan: "dev", state: "active" });
    const token = await h.token(a);
    const acct = await (await h.request("GET", "/api/v1/account", { token })).json();
    expect(acct).toMatchObject({ plan: "dev", state: "active", api_access: true });
  });

  test("without custom_data the customer is found by user_email", async () => {
    h = billingHarness();
    const a = await h.account("free", "Buyer@Example.com");
    const res = await deliver(event("subscription_created", { email: "buyer@example.com", custom: null, variant: "Team" }));
    expect(await res.json()).toMatchObject({ applied: true });
    expect(workspace(a.workspaceId)).toMatchObject({ plan: "team", state: "active" });
  });

  test("an unknown customer is acknowledged with applied: false", async () => {
    h = billingHarness();
    const a = await h.account("free");
    const res = await deliver(event("subscription_created", { accountId: "acct_unknown", email: "stranger@example.com" }));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, applied: false });
    expect(workspace(a.workspaceId).plan).toBe("free");
  });

  test("a replayed delivery answers 200 with replay: true and changes nothing", async () => {
    h = billingHarness();
    const a = await h.account("free");
    const created = event("subscription_created", { accountId: a.accountId });
    expect((await (await deliver(created)).json()).applied).toBe(true);
    expect((await (await deliver(event("subscription_expired", { accountId: a.accountId, status: "expired" }))).json()).applied).toBe(true);
    expect(workspace(a.workspaceId)).toMatchObject({ plan: "dev", state: "read_only" });

    const replay = await deliver(created);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ ok: true, applied: false, replay: true });
    expect(workspace(a.workspaceId)).toMatchObject({ plan: "dev", state: "read_only" });
    expect(billingEventCount()).toBe(2);
  });

  test("subscription_expired makes the account read-only", async () => {
    h = billingHarness();
    const a = await h.account("dev");
    const token = await h.token(a);
    const res = await deliver(event("subscription_expired", { accountId: a.accountId, status: "expired" }));
    expect(await res.json()).toMatchObject({ applied: true, event: "subscription_expired" });
    expect(workspace(a.workspaceId).state).toBe("read_only");
    expect((await h.request("GET", "/api/v1/notes", { token })).status).toBe(200);
    await expectError(await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "x" } } }), 403, "account_read_only");
  });

  test("subscription_payment_success brings a read-only account back and dates the payment", async () => {
    h = billingHarness();
    const a = await h.account("dev");
    const token = await h.token(a);
    await deliver(event("subscription_expired", { accountId: a.accountId, status: "expired" }));
    expect(workspace(a.workspaceId).state).toBe("read_only");
    const raw = event("subscription_payment_success", { accountId: a.accountId });
    const res = await deliver(raw);
    expect(await res.json()).toMatchObject({ applied: true });
    expect(workspace(a.workspaceId)).toMatchObject({
      plan: "dev",
      state: "active",
      last_payment_at: Date.parse(JSON.parse(raw).data.attributes.updated_at),
    });
    expect((await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "x" } } })).status).toBe(201);
  });

  test("subscription_expired for an account already on the free plan is acknowledged, not a 500", async () => {
    h = billingHarness();
    const a = await h.account("free");
    const raw = event("subscription_expired", { accountId: a.accountId, status: "expired" });
    const res = await deliver(raw);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, applied: false });
    expect(workspace(a.workspaceId)).toMatchObject({ plan: "free", state: "active" });
    // Acknowledged once: a redelivery is a replay.
    expect(await (await deliver(raw)).json()).toMatchObject({ replay: true });
  });

  test("subscription_cancelled changes nothing", async () => {
    h = billingHarness();
    const a = await h.account("dev");
    const res = await deliver(event("subscription_cancelled", { accountId: a.accountId, status: "cancelled" }));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, applied: false });
    expect(workspace(a.workspaceId)).toMatchObject({ plan: "dev", state: "active" });
  });
});

describe("rate limit", () => {
  test("100 deliveries a minute per address: the 101st is 429 with Retry-After, another address still gets through", async () => {
    h = billingHarness();
    const a = await h.account("free");
    for (let i = 0; i < 100; i++) {
      const res = await deliver("{}", { signature: null, ip: "203.0.113.7" });
      expect(res.status).toBe(401);
    }
    const limited = await deliver(event("subscription_created", { accountId: a.accountId }), { ip: "203.0.113.7" });
    await expectError(limited, 429, "rate_limited");
    const retry = Number(limited.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect(workspace(a.workspaceId).plan).toBe("free");

    const other = await deliver(event("subscription_created", { accountId: a.accountId }), { ip: "198.51.100.2" });
    expect(other.status).toBe(200);
    expect(workspace(a.workspaceId).plan).toBe("dev");
    // The next minute the first address gets through again.
    h.clock.advance(60_000);
    expect((await deliver(event("subscription_cancelled", { accountId: a.accountId }), { ip: "203.0.113.7" })).status).toBe(200);
  });
});
