// Over 250 lines on purpose: the webhook's event handling, the checkouts that start a
// subscription and the operator's binding share the subscription/variant rules and private
// helpers (idOf, variantOf, the bound target); split, each would re-export them.
import { eq } from "drizzle-orm";
import type { Deps } from "../../deps";
import { billingCheckouts, billingEvents, billingSubscriptions, workspaces } from "../../db/tables";
import { AppError } from "../../http/errors";
import { DAY_MS } from "../../lib/clock";
import { hmacSha256Hex, signatureMatches } from "../../lib/hmac";
import { randomBase62 } from "../../lib/random";
import { sha256Hex } from "../../lib/secrets";
import type { PlanName } from "../../limits/plans";
import { getWorkspace } from "../workspaces/repo";
import { lapse, recordPayment, subscribe } from "../accounts/lifecycle";

/**
 * The subset of a Lemon Squeezy event that notestream reads. `data` is a subscription, except in
 * the payment events, where it is an invoice naming its subscription in `subscription_id`.
 * Nothing the buyer can set (custom_data other than checkout_id, names, e-mail) is read.
 */
interface LemonSqueezyEvent {
  meta?: { event_name?: string; custom_data?: Record<string, unknown> | null };
  data?: {
    id?: string | number;
    attributes?: {
      status?: string;
      variant_id?: number | string;
      customer_id?: number | string;
      subscription_id?: number | string;
      updated_at?: string;
    };
  };
}

export interface BillingOutcome {
  ok: true;
  applied: boolean;
  replay?: boolean;
  reason?: string;
  event?: string;
}

/** A checkout link is good for this long; a subscription created later from it changes nothing. */
export const CHECKOUT_TTL_DAYS = 7;

/** Checks X-Signature (hex HMAC-SHA256 of the raw body) before anything reads the body. */
export function verifyBillingSignature(deps: Deps, raw: Uint8Array, signature: string | null): void {
  const secret = deps.config.billingSecret;
  if (!secret) throw new AppError("unauthorized", "the billing webhook is not configured (NOTESTREAM_BILLING_SECRET)");
  if (!signatureMatches(hmacSha256Hex(secret, raw), signature)) {
    throw new AppError("unauthorized", "missing or invalid X-Signature");
  }
}

/**
 * Starts a checkout for a workspace (inside a write) and returns the link the buyer follows. The
 * link carries only a random checkout id; the subscription it creates is bound to this workspace.
 */
export async function startCheckout(deps: Deps, workspaceId: string, plan: PlanName): Promise<string> {
  const base = deps.config.billingCheckoutUrls.get(plan);
  if (!base) {
    const sold = [...deps.config.billingCheckoutUrls.keys()];
    throw new AppError(
      "bad_request",
      sold.length
        ? `plan ${plan} has no checkout link; on sale: ${sold.join(", ")}`
        : "no plan has a checkout link (NOTESTREAM_BILLING_CHECKOUT_URLS)",
    );
  }
  const id = await recordCheckout(deps, workspaceId, plan);
  // Lemon Squeezy copies checkout[custom][…] query parameters into every event's meta.custom_data.
  return `${base}${base.includes("?") ? "&" : "?"}checkout[custom][checkout_id]=${id}`;
}

/**
 * Records a checkout for a workspace (inside a write) and returns its random id, the one thing a
 * checkout carries that subscription_created binds by: usable once, for CHECKOUT_TTL_DAYS.
 */
export async function recordCheckout(deps: Deps, workspaceId: string, plan: PlanName): Promise<string> {
  const ws = await getWorkspace(deps, workspaceId);
  const id = `chk_${randomBase62(24)}`;
  await deps.db.insert(billingCheckouts).values({ id, workspaceId: ws.id, plan, createdAt: deps.clock.now() });
  return id;
}

const idOf = (v: unknown): string | null =>
  (typeof v === "number" && Number.isSafeInteger(v)) || (typeof v === "string" && /^\d{1,20}$/.test(v)) ? String(v) : null;

function variantOf(event: LemonSqueezyEvent): number | null {
  const id = idOf(event.data?.attributes?.variant_id);
  return id === null ? null : Number(id);
}

/** The plan the subscription's variant sells, by configuration only. */
function planOf(deps: Deps, event: LemonSqueezyEvent): PlanName | null {
  const variant = variantOf(event);
  return variant === null ? null : (deps.config.billingVariants.get(variant) ?? null);
}

const PAYMENT_EVENTS = new Set(["subscription_payment_success", "subscription_payment_recovered"]);

function subscriptionIdOf(name: string, event: LemonSqueezyEvent): string | null {
  return idOf(PAYMENT_EVENTS.has(name) ? event.data?.attributes?.subscription_id : event.data?.id);
}

type Target = { workspaceId: string; reason?: undefined } | { workspaceId?: undefined; reason: string };

/** subscription_created: the workspace comes from an unused, recent checkout this service started. */
async function checkoutTarget(deps: Deps, event: LemonSqueezyEvent, subscriptionId: string): Promise<Target & { checkoutId?: string }> {
  const checkoutId = event.meta?.custom_data?.checkout_id;
  if (typeof checkoutId !== "string" || !checkoutId) return { reason: "no checkout_id in custom_data: the checkout was not started by notestream" };
  const [checkout] = await deps.db.select().from(billingCheckouts).where(eq(billingCheckouts.id, checkoutId));
  if (!checkout) return { reason: "custom_data.checkout_id names no checkout started by notestream" };
  if (checkout.usedAt !== null) return { reason: "the checkout has already been used by another subscription" };
  if (deps.clock.now() - checkout.createdAt > CHECKOUT_TTL_DAYS * DAY_MS) return { reason: `the checkout is older than ${CHECKOUT_TTL_DAYS} days` };
  if (await isBound(deps, subscriptionId)) {
    return { reason: "the subscription is already bound" };
  }
  return { workspaceId: checkout.workspaceId, checkoutId };
}

/** A subscription bound to a workspace already (by a checkout or by the operator). */
async function isBound(deps: Deps, subscriptionId: string): Promise<boolean> {
  const [bound] = await deps.db.select({ id: billingSubscriptions.id }).from(billingSubscriptions).where(eq(billingSubscriptions.id, subscriptionId));
  return bound !== undefined;
}

/** Every later event: the workspace the subscription was bound to, while it is that workspace's current one. */
async function boundTarget(deps: Deps, subscriptionId: string): Promise<Target> {
  const [bound] = await deps.db
    .select({ workspaceId: billingSubscriptions.workspaceId, current: workspaces.billingSubscriptionId })
    .from(billingSubscriptions)
    .innerJoin(workspaces, eq(workspaces.id, billingSubscriptions.workspaceId))
    .where(eq(billingSubscriptions.id, subscriptionId));
  if (!bound) return { reason: `subscription ${subscriptionId} is not bound to any workspace` };
  // The expiry of a subscription that a newer one replaced must not lapse the newer one.
  if (bound.current !== subscriptionId) return { reason: `subscription ${subscriptionId} was replaced by a later one` };
  return { workspaceId: bound.workspaceId };
}

const HANDLED_EVENTS = new Set([
  "subscription_created",
  "subscription_updated",
  "subscription_resumed",
  "subscription_expired",
  "subscription_cancelled",
  "subscription_payment_success",
  "subscription_payment_recovered",
]);
const ACTIVE_STATUSES = new Set(["active", "on_trial", "past_due"]);
const ENDED_STATUSES = new Set(["expired", "unpaid"]);

/**
 * Applies one delivery inside a write. The raw body's hash is recorded with the change, so a
 * delivery already applied is acknowledged and changes nothing.
 */
export async function applyBillingEvent(deps: Deps, raw: Uint8Array, event: LemonSqueezyEvent): Promise<BillingOutcome> {
  const hash = sha256Hex(Buffer.from(raw).toString("latin1"));
  const [seen] = await deps.db.select({ bodyHash: billingEvents.bodyHash }).from(billingEvents).where(eq(billingEvents.bodyHash, hash));
  if (seen) {
    return { ok: true, applied: false, replay: true };
  }
  const name = event.meta?.event_name ?? "";
  const subscriptionId = subscriptionIdOf(name, event);
  const target: Target & { checkoutId?: string } = !HANDLED_EVENTS.has(name)
    ? { reason: "event not handled" }
    : !subscriptionId
      ? { reason: "the event names no subscription id" }
      : name === "subscription_created"
        ? await checkoutTarget(deps, event, subscriptionId)
        : await boundTarget(deps, subscriptionId);
  const outcome: BillingOutcome | Unconfigured =
    target.reason !== undefined
      ? { ok: true, applied: false, event: name, reason: target.reason }
      : await applyToWorkspace(deps, { name, event, subscriptionId: subscriptionId!, workspaceId: target.workspaceId, checkoutId: target.checkoutId });
  // Refused only for a variant not configured yet: left unrecorded, so the store's "resend" applies
  // it once the operator adds the variant (the checkout is still unused).
  if ("unconfigured" in outcome) return { ok: true, applied: false, event: name, reason: outcome.unconfigured };
  await deps.db.insert(billingEvents).values({ bodyHash: hash, eventName: name, workspaceId: target.workspaceId ?? null, receivedAt: deps.clock.now() });
  return outcome;
}

type Unconfigured = { unconfigured: string };

/** The event's effect on the workspace its subscription belongs to. */
async function applyToWorkspace(
  deps: Deps,
  e: { name: string; event: LemonSqueezyEvent; subscriptionId: string; workspaceId: string; checkoutId?: string },
): Promise<BillingOutcome | Unconfigured> {
  const { name, event, subscriptionId, workspaceId } = e;
  const plan = planOf(deps, event);
  const nothing = (reason: string): BillingOutcome => ({ ok: true, applied: false, event: name, reason });
  const unconfigured = (): Unconfigured => {
    const variant = variantOf(event);
    return { unconfigured: variant === null ? "the event names no variant_id" : `variant ${variant} is not in NOTESTREAM_LEMONSQUEEZY_VARIANTS or NOTESTREAM_BILLING_VARIANTS` };
  };
  const status = event.data?.attributes?.status ?? "";
  // A lapse needs a subscription: a workspace moved to the free plan by hand since is left alone.
  const lapseIfSubscribed = async (): Promise<BillingOutcome> => {
    if ((await getWorkspace(deps, workspaceId)).plan === "free") return nothing("the workspace has no subscription");
    await lapse(deps, workspaceId);
    return { ok: true, applied: true, event: name };
  };
  switch (name) {
    case "subscription_created": {
      if (!plan) return unconfigured();
      await bindSubscription(deps, { subscriptionId, workspaceId, checkoutId: e.checkoutId!, event });
      if (!ACTIVE_STATUSES.has(status)) return { ok: true, applied: true, event: name, reason: `bound; status ${status || "(none)"} changes no plan` };
      await subscribe(deps, workspaceId, plan);
      return { ok: true, applied: true, event: name };
    }
    case "subscription_resumed":
    case "subscription_updated": {
      if (ENDED_STATUSES.has(status)) return lapseIfSubscribed();
      if (!ACTIVE_STATUSES.has(status)) return nothing(`status ${status || "(none)"} changes nothing`);
      if (!plan) return unconfigured();
      // A plan changed in the store (another variant) changes the plan here.
      await deps.db.update(billingSubscriptions).set({ variantId: variantOf(event)! }).where(eq(billingSubscriptions.id, subscriptionId));
      await subscribe(deps, workspaceId, plan);
      return { ok: true, applied: true, event: name };
    }
    case "subscription_payment_success":
    case "subscription_payment_recovered":
      await recordPayment(deps, workspaceId, Date.parse(event.data?.attributes?.updated_at ?? "") || deps.clock.now());
      return { ok: true, applied: true, event: name };
    case "subscription_expired":
      return lapseIfSubscribed();
    default:
      // subscription_cancelled: the subscription runs to the end of its period; subscription_expired ends it.
      return nothing("runs until subscription_expired");
  }
}

/**
 * Binds a subscription the operator vouches for (one created before checkouts were bound, read off
 * the store's dashboard) to a workspace, as subscription_created does for a checkout: later events
 * of that subscription then act on this workspace. Its variant must be one the service sells.
 */
export async function bindExistingSubscription(
  deps: Deps,
  b: { workspaceId: string; subscriptionId: string; variantId: number; customerId?: string },
): Promise<PlanName> {
  const subscriptionId = idOf(b.subscriptionId);
  if (subscriptionId === null) throw new AppError("bad_request", `subscription id must be the store's number, got "${b.subscriptionId}"`);
  const plan = deps.config.billingVariants.get(b.variantId);
  if (!plan) throw new AppError("bad_request", `variant ${b.variantId} is not in NOTESTREAM_LEMONSQUEEZY_VARIANTS or NOTESTREAM_BILLING_VARIANTS`);
  const ws = await getWorkspace(deps, b.workspaceId);
  if (await isBound(deps, subscriptionId)) {
    throw new AppError("conflict", `subscription ${subscriptionId} is already bound`);
  }
  await deps.db
    .insert(billingSubscriptions)
    .values({
      id: subscriptionId,
      workspaceId: ws.id,
      customerId: b.customerId === undefined ? null : idOf(b.customerId),
      variantId: b.variantId,
      // No checkout started it: the column's uniqueness still holds one binding per subscription.
      checkoutId: `operator:${subscriptionId}`,
      createdAt: deps.clock.now(),
    });
  await deps.db.update(workspaces).set({ billingSubscriptionId: subscriptionId }).where(eq(workspaces.id, ws.id));
  return plan;
}

/** Uses up the checkout and makes the subscription the workspace's current one. */
async function bindSubscription(deps: Deps, b: { subscriptionId: string; workspaceId: string; checkoutId: string; event: LemonSqueezyEvent }): Promise<void> {
  const now = deps.clock.now();
  await deps.db.update(billingCheckouts).set({ usedAt: now }).where(eq(billingCheckouts.id, b.checkoutId));
  await deps.db
    .insert(billingSubscriptions)
    .values({
      id: b.subscriptionId,
      workspaceId: b.workspaceId,
      customerId: idOf(b.event.data?.attributes?.customer_id),
      variantId: variantOf(b.event)!,
      checkoutId: b.checkoutId,
      createdAt: now,
    });
  await deps.db.update(workspaces).set({ billingSubscriptionId: b.subscriptionId }).where(eq(workspaces.id, b.workspaceId));
}
