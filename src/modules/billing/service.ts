import { and, eq } from "drizzle-orm";
import type { Deps } from "../../deps";
import { billingEvents, workspaces } from "../../db/schema";
import { AppError } from "../../http/errors";
import { hmacSha256Hex, signatureMatches } from "../../lib/hmac";
import { sha256Hex } from "../../lib/secrets";
import { isPlanName, type PlanName } from "../../limits/plans";
import { findAccountByEmail, personalWorkspaceId } from "../accounts/service";
import { lapse, recordPayment, subscribe } from "../accounts/lifecycle";

/** The subset of a Lemon Squeezy subscription event that notestream reads. */
interface LemonSqueezyEvent {
  meta?: { event_name?: string; custom_data?: Record<string, unknown> | null };
  data?: {
    id?: string;
    attributes?: {
      status?: string;
      user_email?: string;
      variant_name?: string;
      product_name?: string;
      updated_at?: string;
      created_at?: string;
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

/** Checks X-Signature (hex HMAC-SHA256 of the raw body) before anything reads the body. */
export function verifyBillingSignature(deps: Deps, raw: Uint8Array, signature: string | null): void {
  const secret = deps.config.billingSecret;
  if (!secret) throw new AppError("unauthorized", "the billing webhook is not configured (NOTESTREAM_BILLING_SECRET)");
  if (!signatureMatches(hmacSha256Hex(secret, raw), signature)) {
    throw new AppError("unauthorized", "missing or invalid X-Signature");
  }
}

/** Plan from custom_data.plan, else from the variant or product name ("Dev", "Team", …). */
function planOf(event: LemonSqueezyEvent): PlanName | null {
  const custom = event.meta?.custom_data?.plan;
  if (typeof custom === "string" && isPlanName(custom)) return custom;
  const name = `${event.data?.attributes?.variant_name ?? ""} ${event.data?.attributes?.product_name ?? ""}`.toLowerCase();
  if (/dev[\s_-]*pro/.test(name)) return "dev_pro";
  if (/\bteam\b/.test(name)) return "team";
  if (/\bdev\b/.test(name)) return "dev";
  if (/\b(personal|paid)\b/.test(name)) return "personal";
  return null;
}

function workspaceOf(deps: Deps, event: LemonSqueezyEvent): string | null {
  const custom = event.meta?.custom_data ?? {};
  if (typeof custom.workspace_id === "string") {
    const ws = deps.db.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, custom.workspace_id)).get();
    if (ws) return ws.id;
  }
  if (typeof custom.account_id === "string") {
    const ws = deps.db
      .select({ id: workspaces.id })
      .from(workspaces)
      .where(and(eq(workspaces.ownerId, custom.account_id), eq(workspaces.kind, "personal")))
      .get();
    if (ws) return ws.id;
  }
  const email = event.data?.attributes?.user_email;
  if (email) {
    const account = findAccountByEmail(deps, email);
    if (account) return personalWorkspaceId(deps, account.id);
  }
  return null;
}

const ACTIVE_STATUSES = new Set(["active", "on_trial", "past_due"]);
const ENDED_STATUSES = new Set(["expired", "unpaid"]);

/**
 * Applies one delivery inside a write. The raw body's hash is recorded with the change, so a
 * delivery already applied is acknowledged and changes nothing.
 */
export function applyBillingEvent(deps: Deps, raw: Uint8Array, event: LemonSqueezyEvent): BillingOutcome {
  const hash = sha256Hex(Buffer.from(raw).toString("latin1"));
  if (deps.db.select().from(billingEvents).where(eq(billingEvents.bodyHash, hash)).get()) {
    return { ok: true, applied: false, replay: true };
  }
  const name = event.meta?.event_name ?? "";
  const workspaceId = workspaceOf(deps, event);
  deps.db.insert(billingEvents).values({ bodyHash: hash, eventName: name, workspaceId, receivedAt: deps.clock.now() }).run();
  if (!workspaceId) return { ok: true, applied: false, event: name, reason: "no account matches custom_data or user_email" };
  const status = event.data?.attributes?.status ?? "";
  const at = Date.parse(event.data?.attributes?.updated_at ?? "") || deps.clock.now();
  const plan = planOf(event);
  // A lapse needs a subscription: an event that names a free workspace (a team bought by someone
  // whose own workspace is free, say) is acknowledged and changes nothing.
  const lapseIfSubscribed = (): BillingOutcome => {
    const current = deps.db.select({ plan: workspaces.plan }).from(workspaces).where(eq(workspaces.id, workspaceId)).get()!.plan;
    if (current === "free") return { ok: true, applied: false, event: name, reason: "the matched workspace has no subscription" };
    lapse(deps, workspaceId);
    return { ok: true, applied: true, event: name };
  };
  const needPlan = () => {
    if (plan) return plan;
    const current = deps.db.select({ plan: workspaces.plan }).from(workspaces).where(eq(workspaces.id, workspaceId)).get()!.plan as PlanName;
    return current === "free" ? null : current;
  };
  switch (name) {
    case "subscription_created":
    case "subscription_resumed":
    case "subscription_updated": {
      if (ENDED_STATUSES.has(status)) return lapseIfSubscribed();
      if (!ACTIVE_STATUSES.has(status)) return { ok: true, applied: false, event: name, reason: `status ${status || "(none)"} changes nothing` };
      const p = needPlan();
      if (!p) return { ok: true, applied: false, event: name, reason: "cannot tell the plan from custom_data.plan or the variant name" };
      subscribe(deps, workspaceId, p);
      return { ok: true, applied: true, event: name };
    }
    case "subscription_payment_success":
    case "subscription_payment_recovered":
      recordPayment(deps, workspaceId, at);
      return { ok: true, applied: true, event: name };
    case "subscription_expired":
      return lapseIfSubscribed();
    case "subscription_cancelled":
      // A cancelled subscription runs to the end of its period; subscription_expired ends it.
      return { ok: true, applied: false, event: name, reason: "runs until subscription_expired" };
    default:
      return { ok: true, applied: false, event: name, reason: "event not handled" };
  }
}
