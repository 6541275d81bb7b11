import type { Deps } from "../../deps";
import { AppError } from "../../http/errors";
import { DAY_MS } from "../../lib/clock";
import { PLAN_NAMES, tierFor, type PlanName, type Tier } from "../../limits/plans";
import { getWorkspace, type WorkspaceRow } from "../workspaces/repo";
import { createProviderCheckout, customerPortalUrl } from "./provider";
import { CHECKOUT_TTL_DAYS, recordCheckout } from "./service";

/** The tiers of the active limit profile, cheapest first: the same data the API's caps come from. */
export function profileTiers(deps: Deps): Tier[] {
  const seen = new Map<string, Tier>();
  for (const plan of PLAN_NAMES) {
    const tier = tierFor(deps.config.limitProfile, plan);
    if (!seen.has(tier.name)) seen.set(tier.name, tier);
  }
  return [...seen.values()];
}

/** The tier a workspace's plan is, in the active profile's words (personal and paid are one tier, by profile). */
export const tierNameOf = (deps: Deps, ws: WorkspaceRow): string => tierFor(deps.config.limitProfile, ws.plan as PlanName).name;

/** The configured plan and variant a checkout of this tier sells; null when billing is off or the tier is not on sale. */
export function offerFor(deps: Deps, tierName: string): { plan: PlanName; variantId: number } | null {
  const ls = deps.config.lemonSqueezy;
  if (!ls) return null;
  for (const [plan, variantId] of ls.checkoutVariants) {
    if (tierFor(deps.config.limitProfile, plan).name === tierName) return { plan, variantId };
  }
  return null;
}

/** A subscription the store is billing now: plan changes and cancelling go through its portal, not a second checkout. */
export const hasRunningSubscription = (ws: WorkspaceRow): boolean => ws.billingSubscriptionId !== null && ws.state === "active" && ws.plan !== "free";

/** A personal workspace's plan is its owner's to change; a team's, the team owner's. */
export const mayManagePlan = (ws: WorkspaceRow, accountId: string): boolean => ws.ownerId === accountId;

function billingOn(deps: Deps) {
  const ls = deps.config.lemonSqueezy;
  if (!ls) throw new AppError("conflict", "Billing is not set up on this server: its operator changes plans (notestream account set-plan).");
  return ls;
}

function assertManager(ws: WorkspaceRow, accountId: string | null): void {
  if (accountId !== null && !mayManagePlan(ws, accountId)) throw new AppError("insufficient_scope", "Only the team's owner changes its plan and billing.");
}

/**
 * Starts a checkout of a tier for a workspace through the provider's API: the checkout is
 * recorded first (its id is what subscription_created binds by), then created at the provider
 * with the store, the one variant and the workspace set here. Returns the URL to send the buyer
 * to. `accountId` is who asks (null: the operator, from the command line).
 */
export async function startPlanCheckout(
  deps: Deps,
  o: { workspaceId: string; tierName: string; accountId: string | null; email: string; returnUrl: string },
): Promise<string> {
  const ls = billingOn(deps);
  const offer = offerFor(deps, o.tierName);
  if (!offer) throw new AppError("bad_request", `The ${o.tierName} plan is not on sale here.`);
  const checkoutId = await deps.writer.write(async () => {
    const ws = await getWorkspace(deps, o.workspaceId);
    assertManager(ws, o.accountId);
    if (hasRunningSubscription(ws)) throw new AppError("conflict", "This workspace already has a subscription: change or cancel it with Manage billing.");
    if (ws.state === "active" && tierNameOf(deps, ws) === o.tierName) throw new AppError("conflict", `This workspace is on the ${o.tierName} plan already.`);
    return recordCheckout(deps, ws.id, offer.plan);
  });
  return createProviderCheckout(ls, {
    storeId: ls.storeId,
    variantId: offer.variantId,
    email: o.email,
    custom: { workspace_id: o.workspaceId, checkout_id: checkoutId },
    redirectUrl: o.returnUrl,
    // The provider stops taking it when the webhook would stop honouring it.
    expiresAt: new Date(deps.clock.now() + CHECKOUT_TTL_DAYS * DAY_MS),
  });
}

/** The customer portal of the workspace's subscription (invoices, payment method, plan change, cancelling). */
export async function billingPortal(deps: Deps, o: { workspaceId: string; accountId: string | null }): Promise<string> {
  const ls = billingOn(deps);
  const ws = await getWorkspace(deps, o.workspaceId);
  assertManager(ws, o.accountId);
  if (!ws.billingSubscriptionId) throw new AppError("conflict", "This workspace has no subscription at the store yet: choose a plan first.");
  return customerPortalUrl(ls, ws.billingSubscriptionId);
}
