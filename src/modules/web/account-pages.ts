import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { pageFrom } from "../../lib/pagination";
import { revokeAccountGrants } from "../oauth/tokens";
import { html, page, type Html } from "../../web/html";
import { back, bytes, csrfField, flashFrom, layout, when } from "../../web/layout";
import { pageMacros, type RefusalContext } from "../../web/macros";
import { sessionIdHash, type WebSession } from "../../web/session";
import { startTrial } from "../accounts/lifecycle";
import { describeAccount, normaliseEmail } from "../accounts/service";
import { NEW_PASSWORD_ATTRS, PASSWORD_RULE } from "../accounts/password";
import { assertNewPassword, BIO_MAX_CHARS, changePassword, checkCurrentPassword, confirmEmailChange, NAME_MAX_CHARS, requestEmailChange, updateProfile } from "../accounts/web-auth";
import type { AppError } from "../../http/errors";
import { listApiErrors } from "../api-errors/service";
import { revokeAccountTokens } from "../tokens/service";
import { getWorkspace } from "../workspaces/repo";
import { exportCard } from "./export-pages";
import { accountDeletionPages } from "./account-deletion-pages";
import { field, firstValue, formFields, formProblem, freshForm, refusedForm, refusedStatus, typedValues, type FormState } from "./form";
import { limit } from "./limits";
import { usageCard } from "./onboarding-pages";
import { planPages, planSection } from "./plan-pages";

function meter(used: number, cap: number | null, label: string, format = (n: number) => String(n)): Html {
  const pct = cap ? Math.min(100, Math.round((used / cap) * 100)) : 0;
  return html`<div class="mb10"><div class="row spread small"><span>${label}</span><span class="muted">${format(used)} of ${cap === null ? "unlimited" : format(cap)}</span></div>${
    cap === null ? "" : html`<progress class="meter" value="${Math.min(used, cap)}" max="${cap}" aria-label="${label}">${pct}%</progress>`
  }</div>`;
}

/** The account page's own forms, each shown again with what was typed after a refusal. */
type AccountForm = "profile" | "email" | "password";
const ACCOUNT_FIELDS: Record<AccountForm, readonly string[]> = { profile: ["name", "bio"], email: ["email", "password"], password: ["current_password", "new_password"] };

async function accountPage(
  deps: Deps,
  s: WebSession,
  url: URL,
  shown: Partial<Record<AccountForm, FormState>> = {},
  status = 200,
  headers: Record<string, string> = {},
): Promise<Response> {
  const profile = shown.profile ?? freshForm({ name: s.account.name, bio: s.account.bio });
  const address = shown.email ?? freshForm();
  const password = shown.password ?? freshForm();
  const a = await describeAccount({ ctx: s.ctx });
  const ws = await getWorkspace(deps, s.workspaceId);
  const errors = (await listApiErrors({ ctx: s.ctx, page: pageFrom({ limit: 20 }) })).items;
  const exports = await exportCard(deps, s);
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
<div class="card" id="plan"><h2>Plan</h2><p><strong>${a.plan}</strong> · ${stateText[a.state] ?? a.state}</p>
  ${meter(a.usage.notes, a.caps.notes ?? (a.caps.plain_notes === null ? null : a.caps.plain_notes + (a.caps.rich_notes ?? 0)), "Notes")}
  ${meter(a.usage.storage_bytes, a.caps.storage_bytes, "Storage", bytes)}
  ${meter(a.usage.folders, a.caps.folders, "Folders")}
  ${meter(a.usage.active_tokens, a.caps.active_tokens, "API tokens")}
  ${canTrial ? html`<form method="post" action="/settings/trial">${csrfField(s)}<button class="primary">Start the 14-day API trial</button> <span class="muted small">100 notes, 300 MB, the REST API. Once per account.</span></form>` : ""}
  ${await planSection(deps, s)}
</div>
${usageCard(s)}
${exports}
<div class="card" id="profile"><h2>Profile</h2><form method="post" action="/settings/profile">${csrfField(s)}${formProblem(profile)}
  ${field("profile", profile, { name: "name", label: "Name", attrs: `maxlength="${NAME_MAX_CHARS}" autocomplete="name"` })}
  ${field("profile", profile, { name: "bio", label: "Bio", type: "textarea", attrs: `maxlength="${BIO_MAX_CHARS}" class="bio"` })}
  <button>Save profile</button></form></div>
<div class="card" id="address"><h2>E-mail address</h2><p class="small">Now <strong>${s.account.email}</strong>. We send a link to the new address to confirm it; confirming signs your other browsers out.</p>
  <form method="post" action="/settings/email">${csrfField(s)}${formProblem(address)}
  ${field("address", address, { name: "email", label: "New e-mail address", type: "email", attrs: 'required autocomplete="email"' })}
  ${field("address", address, { name: "password", label: "Current password", type: "password", attrs: 'required autocomplete="current-password"' })}
  <button>Change address</button></form></div>
<div class="card" id="password"><h2>Password</h2><p class="small">A new password signs your other browsers out and ends every AI client's access. API tokens keep working: <a href="/settings/access">end them</a> too if someone else may have had the password.</p>
  <form method="post" action="/settings/password">${csrfField(s)}${formProblem(password)}
  ${field("password", password, { name: "current_password", label: "Current password", type: "password", attrs: 'required autocomplete="current-password"' })}
  ${field("password", password, { name: "new_password", label: "New password", type: "password", attrs: NEW_PASSWORD_ATTRS, hint: `${PASSWORD_RULE}.` })}
  <button>Change password</button></form></div>
<div class="card"><h2>API tokens and AI clients</h2><p class="small">The AI clients you allowed (Claude, Cursor, VS Code…), each revocable: <a href="/settings/apps">Connected apps</a>. If someone else may have had your password, <a href="/settings/access">end every API token and AI-client grant at once</a>.</p></div>
<div class="card danger-zone"><h2>Delete the account</h2><p class="small">Every note, folder, version, token and export goes, for good. You can take an export first.</p>
  <p><a class="button danger" href="/settings/delete">Delete your account…</a></p></div>
<div class="card"><h2>API errors</h2>${
        errors.length
          ? html`<table><tr><th>When</th><th>Request</th><th>Status</th><th>Code</th></tr>${errors.map((e) => html`<tr><td>${when(e.at)}</td><td class="mono">${e.method} ${e.path}</td><td>${e.status}</td><td>${e.code}</td></tr>`)}</table>`
          : html`<p class="muted small">No errors: every API request of this account succeeded.</p>`
      }</div>`,
    }),
    status,
    headers,
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
  <p class="small">A new password signs other browsers out and ends the access you gave AI clients (MCP), but API tokens and the browser-extension token keep working. If someone else may have had your password, end them all: scripts and clients then need new ones.</p>
  <form method="post" action="/settings/access/revoke">${csrfField(s)}<button class="danger">Revoke every API token and AI-client grant</button></form>
  <p class="muted small">To end one token only, use the <a href="/settings/tokens">API tokens</a> page.</p></div>`,
    }),
  );
}

const counted = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

/** A refused account form: the account page again, that form with what was typed (never a password) and its messages. */
function accountRefused(deps: Deps, form: AccountForm) {
  return async (e: AppError, { s, request, body }: RefusalContext) => {
    const status = refusedStatus(e);
    if (status === null || !s) return undefined;
    const { password: _p, current_password: _c, new_password: _n, _csrf, ...values } = typedValues(body);
    return accountPage(deps, s, new URL(request.url), { [form]: refusedForm(e, values, ACCOUNT_FIELDS[form]) }, status, e.headers);
  };
}

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
        await limit(deps, "profilePerAccount", s.account.id);
        await updateProfile(deps, s.account.id, { name: firstValue(b.name), bio: firstValue(b.bio) });
        return back("/settings", "ok", "Profile saved.");
      },
      { session: "form", refused: accountRefused(deps, "profile") },
    )
    .post(
      "/settings/email",
      async ({ s, body }) => {
        const b = formFields(body);
        // Counted first, so wrong passwords use up the account's three a day too.
        await limit(deps, "emailChangePerAccount", s.account.id);
        await checkCurrentPassword(s.account, firstValue(b.password));
        await limit(deps, "emailChangePerTarget", firstValue(b.email));
        await requestEmailChange(deps, s.account, firstValue(b.email));
        return back("/settings", "ok", `We sent a confirmation link to ${normaliseEmail(firstValue(b.email))}.`);
      },
      { session: "form", refused: accountRefused(deps, "email") },
    )
    .post(
      "/settings/password",
      async ({ s, body, request }) => {
        const b = formFields(body);
        const next = firstValue(b.new_password);
        // The rule first: a password that breaks it is no guess at the current one.
        assertNewPassword(next, "new_password");
        // Counted before the check, given back when it passes: only wrong guesses use it up.
        const attempt = await limit(deps, "currentPasswordPerAccount", s.account.id);
        await checkCurrentPassword(s.account, firstValue(b.current_password), { field: "current_password", message: "That is not your current password." });
        attempt.refund();
        await changePassword(deps, s.account, next, sessionIdHash(request));
        return back("/settings", "ok", "Your password is changed, your other browsers are signed out and AI clients must ask again. API tokens keep working.");
      },
      { session: "form", refused: accountRefused(deps, "password") },
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
        const [apiTokens, grants] = await deps.writer.write(async (): Promise<[number, number]> => [
          await revokeAccountTokens(deps, s.account.id),
          await revokeAccountGrants(deps, s.account.id),
        ]);
        return back("/settings/access", "ok", `Revoked ${counted(apiTokens, "API token")} and ${counted(grants, "AI-client grant")}: they answer 401 from now on.`);
      },
      { session: "form", refused: "/settings/access" },
    )
    .use(accountDeletionPages(deps))
    .use(planPages(deps));
