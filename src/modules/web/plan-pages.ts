import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import type { AppError } from "../../http/errors";
import { publicOrigin } from "../../http/origin";
import type { Tier } from "../../limits/plans";
import { redirectWithFlash, takeFlash } from "../../web/flash";
import { html, page, type Html } from "../../web/html";
import { bytes, csrfField, layout, redirect } from "../../web/layout";
import { pageMacros } from "../../web/macros";
import { refusalMessage } from "../../web/refusal";
import type { WebSession } from "../../web/session";
import { billingPortal, hasRunningSubscription, mayManagePlan, offerFor, profileTiers, startPlanCheckout, tierNameOf } from "../billing/checkout";
import { getWorkspace } from "../workspaces/repo";
import { firstValue, formFields } from "./form";
import { limit } from "./limits";

/**
 * The account page's plan section and its two actions: a checkout of another tier, and the
 * customer portal of the subscription. Both leave for the provider's site through a page of ours
 * (CONTINUE) rather than a redirect from the form: browsers hold a form's redirects to the page's
 * form-action ('self'), and the provider's hosts are not known in advance.
 */
const CONTINUE = "/settings/plan/continue";
const LEAVING: Record<string, { title: string; what: string }> = {
  checkout: { title: "To the checkout", what: "the store's checkout" },
  portal: { title: "To billing", what: "the store's customer portal" },
};

const tierLabel = (name: string) => (name === "dev_pro" ? "Dev-pro" : name.charAt(0).toUpperCase() + name.slice(1));
const count = (n: number) => n.toLocaleString("en-US");

function notesCap(t: Tier): string {
  if (!t.notes) return "no cap";
  if ("shared" in t.notes) return `${count(t.notes.shared)} notes`;
  return `${count(t.notes.rich)} rich + ${count(t.notes.plain)} plain`;
}

function tierRow(deps: Deps, s: WebSession, t: Tier, current: boolean, canBuy: boolean): Html {
  const offer = canBuy && !current ? offerFor(deps, t.name) : null;
  return html`<tr class="${current ? "current" : ""}"><td data-label="Plan">${tierLabel(t.name)}${current ? html`<span class="badge ok">your plan</span>` : ""}</td>
<td data-label="Notes">${notesCap(t)}</td><td data-label="Storage">${t.storage === null ? "no cap" : bytes(t.storage)}</td>
<td data-label="API">${t.api ? `yes, ${t.tokens === null ? "any number of" : t.tokens} token${t.tokens === 1 ? "" : "s"}` : "no"}</td>
<td data-label="Plain note size">${t.plainBody === null ? "no cap" : bytes(t.plainBody)}</td><td data-label="Dead-man alerts">${t.deadman ? "yes" : "no"}</td>
<td data-label="">${
    offer
      ? html`<form method="post" action="/settings/plan/checkout">${csrfField(s)}<input type="hidden" name="plan" value="${t.name}"><button class="primary">Choose ${tierLabel(t.name)}</button></form>`
      : ""
  }</td></tr>`;
}

/** The tiers of the active limit profile with their caps, the current one marked, and what may be done about it here. */
export async function planSection(deps: Deps, s: WebSession): Promise<Html> {
  if (deps.config.limitProfile === "unlimited") {
    return html`<p class="small plan-actions">This server runs without plan limits (the unlimited profile): every plan has the API and no caps.</p>`;
  }
  const ws = await getWorkspace(deps, s.workspaceId);
  const billing = deps.config.lemonSqueezy !== null;
  const manager = mayManagePlan(ws, s.account.id);
  const running = hasRunningSubscription(ws);
  const current = tierNameOf(deps, ws);
  const canBuy = billing && manager && !running;
  const who = ws.kind === "team" ? html` --team ${ws.id}` : "";
  return html`<h3>Plans</h3>
<table class="cards plans"><thead><tr><th>Plan</th><th>Notes</th><th>Storage</th><th>API</th><th>Plain note size</th><th>Dead-man alerts</th><th><span class="sr-only">Action</span></th></tr></thead>
<tbody>${profileTiers(deps).map((t) => tierRow(deps, s, t, t.name === current, canBuy))}</tbody></table>
<div class="plan-actions">${
    !billing
      ? html`<p class="small">Plans on this server are changed by its operator, with <code>notestream account set-plan --email ${s.account.email}${who} --plan dev</code> (any plan above).</p>`
      : !manager
        ? html`<p class="small">The team's owner changes its plan and billing.</p>`
        : html`${running ? html`<p class="small">To switch plans or cancel, use Manage billing: the store tells this page what changed.</p>` : ""}${
            ws.billingSubscriptionId
              ? html`<form method="post" action="/settings/plan/portal">${csrfField(s)}<button>Manage billing</button> <span class="muted small">Invoices, payment method, plan changes and cancelling, at the store.</span></form>`
              : ""
          }`
  }
<p class="muted small">A move to a plan without the API revokes the API tokens; notes above a smaller plan's cap stay readable and exportable, and new ones wait until there is room.</p></div>`;
}

/** A refused plan action: the account page, at its plan section, with the message. */
const planRefused = (e: AppError) => redirect(`/settings?error=${encodeURIComponent(refusalMessage(e))}#plan`);

export const planPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .post(
      "/settings/plan/checkout",
      async ({ s, body, request }) => {
        await limit(deps, "planActionsPerAccount", s.account.id);
        const url = await startPlanCheckout(deps, {
          workspaceId: s.workspaceId,
          tierName: firstValue(formFields(body).plan),
          accountId: s.account.id,
          email: s.account.email,
          returnUrl: `${publicOrigin(deps, request)}/settings?ok=${encodeURIComponent("Thank you! The plan changes here as soon as the store confirms the payment.")}#plan`,
        });
        return redirectWithFlash(deps, s, CONTINUE, { secret: { kind: "checkout", value: url } });
      },
      { session: "form", refused: planRefused },
    )
    .post(
      "/settings/plan/portal",
      async ({ s }) => {
        await limit(deps, "planActionsPerAccount", s.account.id);
        const url = await billingPortal(deps, { workspaceId: s.workspaceId, accountId: s.account.id });
        return redirectWithFlash(deps, s, CONTINUE, { secret: { kind: "portal", value: url } });
      },
      { session: "form", refused: planRefused },
    )
    .get(
      CONTINUE,
      ({ s, request }) => {
        const { flash, headers } = takeFlash(deps, s, request);
        const leaving = flash.secret ? LEAVING[flash.secret.kind] : undefined;
        // Shown once: a reload (or a link to this page) goes back to the account page.
        if (!leaving) return redirect("/settings#plan", headers);
        const target = flash.secret!.value;
        return page(
          layout({
            title: leaving.title,
            session: s,
            active: "settings",
            body: html`<div class="card narrow"><h1>${leaving.title}</h1><p>Taking you to ${leaving.what}…</p><p><a class="button primary" href="${target}">Continue</a></p><p class="muted small"><a href="/settings#plan">Back to the account page</a></p></div>`,
          }),
          200,
          // The Refresh header is a navigation of its own, not the form's redirect, so form-action does not hold it.
          { ...headers, refresh: `0; url=${target}` },
        );
      },
      { session: "page" },
    );
