import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { iso } from "../../lib/clock";
import { pageFrom } from "../../lib/pagination";
import { revokeAccountGrants } from "../../mcp/oauth/tokens";
import { html, page, type Html } from "../../web/html";
import { back, bytes, csrfField, flashFrom, layout, when } from "../../web/layout";
import { pageMacros } from "../../web/macros";
import { sessionIdHash, type WebSession } from "../../web/session";
import { startTrial } from "../accounts/lifecycle";
import { describeAccount, normaliseEmail } from "../accounts/service";
import { checkCurrentPassword, confirmEmailChange, requestEmailChange, updateProfile } from "../accounts/web-auth";
import { listApiErrors } from "../errors/service";
import { recentExports } from "../export/service";
import { revokeAccountTokens } from "../tokens/service";
import { getWorkspace } from "../workspaces/repo";
import { firstValue, formFields } from "./form";
import { limit } from "./limits";

function meter(used: number, cap: number | null, label: string, format = (n: number) => String(n)): Html {
  const pct = cap ? Math.min(100, Math.round((used / cap) * 100)) : 0;
  return html`<div class="mb10"><div class="row spread small"><span>${label}</span><span class="muted">${format(used)} of ${cap === null ? "unlimited" : format(cap)}</span></div>${
    cap === null ? "" : html`<progress class="meter" value="${Math.min(used, cap)}" max="${cap}" aria-label="${label}">${pct}%</progress>`
  }</div>`;
}

function accountPage(deps: Deps, s: WebSession, url: URL): Response {
  const a = describeAccount({ ctx: s.ctx });
  const ws = getWorkspace(deps, s.workspaceId);
  const errors = listApiErrors({ ctx: s.ctx, page: pageFrom({ limit: 20 }) }).items;
  const exportsList = recentExports(deps, s.workspaceId, 5);
  const now = deps.clock.now();
  const canTrial = !ws.trialUsed && ws.state === "active" && !a.api_access;
  const stateText: Record<string, string> = {
    active: ws.plan === "free" ? "free" : "subscribed",
    trial: `API trial until ${a.trial_ends_at?.slice(0, 10)}`,
    trial_ended: "trial ended: the trial's tokens can still read",
    read_only: "read-only: notes can be read and exported, not changed",
  };
  return page(
    layout({
      title: "Account",
      session: s,
      active: "settings",
      flash: flashFrom(url),
      body: html`<h1>Account</h1>
<div class="card"><h2>Plan</h2><p><strong>${a.plan}</strong> · ${stateText[a.state] ?? a.state}</p>
  ${meter(a.usage.notes, a.caps.notes ?? (a.caps.plain_notes === null ? null : a.caps.plain_notes + (a.caps.rich_notes ?? 0)), "Notes")}
  ${meter(a.usage.storage_bytes, a.caps.storage_bytes, "Storage", bytes)}
  ${meter(a.usage.folders, a.caps.folders, "Folders")}
  ${meter(a.usage.active_tokens, a.caps.active_tokens, "API tokens")}
  ${canTrial ? html`<form method="post" action="/settings/trial">${csrfField(s)}<button class="primary">Start the 14-day API trial</button> <span class="muted small">100 notes, 300 MB, the REST API. Once per account.</span></form>` : ""}
</div>
<div class="card"><h2>Export everything</h2><p class="small">A zip of every note, in folders, with a manifest. We mail you a link that works for 24 hours. Two an hour.</p>
  <form method="post" action="/settings/export">${csrfField(s)}<button>Request an export</button></form>
  ${
    exportsList.length
      ? html`<table class="mt10"><tr><th>Requested</th><th>Status</th><th></th></tr>${exportsList.map((e) => {
          const live = e.status === "ready" && (e.expiresAt ?? 0) > now;
          return html`<tr><td>${when(iso(e.createdAt))}</td><td>${live ? "ready" : e.status === "ready" ? "expired" : e.status}</td><td>${live ? html`<a href="/exports/${e.id}/download">Download (${bytes(e.sizeBytes)})</a>` : ""}</td></tr>`;
        })}</table>`
      : ""
  }
</div>
<div class="card"><h2>Profile</h2><form method="post" action="/settings/profile">${csrfField(s)}
  <label><span>Name</span><input type="text" name="name" maxlength="80" value="${s.account.name}"></label>
  <label><span>Bio</span><textarea name="bio" maxlength="500" class="bio">${s.account.bio}</textarea></label>
  <button>Save profile</button></form></div>
<div class="card"><h2>E-mail address</h2><p class="small">Now <strong>${s.account.email}</strong>. We send a link to the new address to confirm it; confirming signs your other browsers out.</p>
  <form method="post" action="/settings/email" class="row">${csrfField(s)}<input type="email" name="email" required placeholder="new@example.com" aria-label="New e-mail address"><input type="password" name="password" required autocomplete="current-password" placeholder="Current password" aria-label="Current password"><button>Change address</button></form></div>
<div class="card"><h2>API tokens and AI clients</h2><p class="small">If someone else may have had your password, <a href="/settings/access">end every API token and AI-client grant at once</a>.</p></div>
<div class="card"><h2>API errors</h2>${
        errors.length
          ? html`<table><tr><th>When</th><th>Request</th><th>Status</th><th>Code</th></tr>${errors.map((e) => html`<tr><td>${when(e.at)}</td><td class="mono">${e.method} ${e.path}</td><td>${e.status}</td><td>${e.code}</td></tr>`)}</table>`
          : html`<p class="muted small">No errors: every API request of this account succeeded.</p>`
      }</div>`,
    }),
  );
}

function accessPage(s: WebSession, url: URL): Response {
  return page(
    layout({
      title: "API tokens and AI clients",
      session: s,
      active: "settings",
      flash: flashFrom(url),
      body: html`<h1>API tokens and AI clients</h1>
<div class="card"><h2>End them all</h2>
  <p class="small">A new password signs other browsers out, but API tokens, the browser-extension token and the access you gave AI clients (MCP) keep working. If someone else may have had your password, end them all: scripts and clients then need new ones.</p>
  <form method="post" action="/settings/access/revoke">${csrfField(s)}<button class="danger">Revoke every API token and AI-client grant</button></form>
  <p class="muted small">To end one token only, use the <a href="/settings/tokens">API tokens</a> page.</p></div>`,
    }),
  );
}

const counted = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

/** The account page (plan, usage, exports, profile, address, API errors), its forms, and ending every token and grant at once. */
export const accountPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .get("/settings", ({ s, request }) => accountPage(deps, s, new URL(request.url)), { session: "page" })
    .post(
      "/settings/trial",
      async ({ s }) => {
        await deps.writer.write(() => startTrial(deps, s.workspaceId));
        return back("/settings", "ok", "Your 14-day API trial has started. Create a token on the API tokens page.");
      },
      { session: "form", refused: "/settings" },
    )
    .post(
      "/settings/profile",
      async ({ s, body }) => {
        const b = formFields(body);
        limit(deps, "profilePerAccount", s.account.id);
        await updateProfile(deps, s.account.id, { name: firstValue(b.name), bio: firstValue(b.bio) });
        return back("/settings", "ok", "Profile saved.");
      },
      { session: "form", refused: "/settings" },
    )
    .post(
      "/settings/email",
      async ({ s, body }) => {
        const b = formFields(body);
        // Counted first, so wrong passwords use up the account's three a day too.
        limit(deps, "emailChangePerAccount", s.account.id);
        await checkCurrentPassword(s.account, firstValue(b.password));
        limit(deps, "emailChangePerTarget", firstValue(b.email));
        await requestEmailChange(deps, s.account, firstValue(b.email));
        return back("/settings", "ok", `We sent a confirmation link to ${normaliseEmail(firstValue(b.email))}.`);
      },
      { session: "form", refused: "/settings" },
    )
    .get(
      "/settings/email/confirm",
      async ({ request, query }) => {
        const account = await confirmEmailChange(deps, String(query.token ?? ""), sessionIdHash(request));
        return back("/settings", "ok", `Your address is now ${account.email}.`);
      },
      { refused: "/settings" },
    )
    .get("/settings/access", ({ s, request }) => accessPage(s, new URL(request.url)), { session: "page" })
    .post(
      "/settings/access/revoke",
      async ({ s }) => {
        const [apiTokens, grants] = await deps.writer.write((): [number, number] => [revokeAccountTokens(deps, s.account.id), revokeAccountGrants(deps, s.account.id)]);
        return back("/settings/access", "ok", `Revoked ${counted(apiTokens, "API token")} and ${counted(grants, "AI-client grant")}: they answer 401 from now on.`);
      },
      { session: "form", refused: "/settings/access" },
    );
