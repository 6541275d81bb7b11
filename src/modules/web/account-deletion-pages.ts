import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { randomBase62 } from "../../lib/random";
import { html, page, type Html } from "../../web/html";
import { back, csrfField, flashFrom, layout, redirect } from "../../web/layout";
import { pageMacros, type RefusalPage } from "../../web/macros";
import { cookieValue, FORM_COOKIE, formCookie, loadSession, sessionCookie, type WebSession } from "../../web/session";
import { deleteAccountByLink, pendingDeletion, requestAccountDeletion, sharedTeamsOwned } from "../accounts/deletion";
import { getWorkspace } from "../workspaces/repo";
import { exportCard } from "./export-pages";
import { field, firstValue, formFields, formProblem, freshForm, refusedForm, refusedStatus, type FormState } from "./form";
import { limit } from "./limits";

/** Step one offers the export; step two asks for the password and mails the link that deletes. */
async function deletionPage(deps: Deps, s: WebSession, url: URL, form: FormState = freshForm(), status = 200, headers: Record<string, string> = {}): Promise<Response> {
  const personal = s.workspaces.find((w) => w.kind === "personal");
  const ws = personal ? await getWorkspace(deps, personal.id) : null;
  // Only a subscription bought at the store bills on; a plan the operator set has nothing to cancel.
  const billed = ws !== null && ws.billingSubscriptionId !== null && ws.state !== "read_only";
  const teams = await sharedTeamsOwned(deps, s.account.id);
  const exports = s.workspaceId === personal?.id ? await exportCard(deps, s) : html`<div class="card"><p class="small">Switch to your personal workspace to export its notes first.</p></div>`;
  return page(
    layout({
      title: "Delete your account",
      session: s,
      active: "settings",
      flash: flashFrom(url),
      body: html`<h1>Delete your account</h1>
<p>Deleting <strong>${s.account.email}</strong> removes every note of your personal workspace with its folders, versions and trash, your API tokens and AI-client grants, webhooks, inboxes and exports, for good. Notes you wrote in teams stay with the team.</p>
<h2>1. Take your notes with you</h2>
${exports}
<h2>2. Delete the account</h2>
<div class="card danger-zone">
  ${billed ? html`<p class="small">Your ${ws!.plan} plan is a subscription at the store: deleting the account does not cancel it there. Cancel it first.</p>` : ""}
  ${teams.length ? html`<p class="small">You own ${teams.map((t, i) => html`${i ? ", " : ""}the team “${t.name}” (${t.others} other ${t.others === 1 ? "member" : "members"})`)}: the account cannot be deleted while others use a team it owns.</p>` : ""}
  <form method="post" action="/settings/delete">${csrfField(s)}${formProblem(form)}
    ${field("delete", form, { name: "password", label: "Your password", type: "password", attrs: 'required autocomplete="current-password"' })}
    <button class="danger" type="submit">Mail me the link that deletes the account</button>
  </form>
  <p class="muted small">The link goes to ${s.account.email} and works for one hour. The account is deleted when you follow it and confirm.</p>
</div>`,
    }),
    status,
    headers,
  );
}

/** The mailed link's page, before sign-in too: what it deletes, and the button that does it. */
async function confirmPage(deps: Deps, request: Request, token: string): Promise<Response> {
  const email = (await pendingDeletion(deps, token))?.email ?? null;
  const csrf = cookieValue(request, FORM_COOKIE) ?? randomBase62(32);
  const body: Html = email
    ? html`<div class="narrow card danger-zone"><h1>Delete ${email}?</h1>
  <p>The account, every note in it, its versions, tokens and exports are deleted for good. This cannot be undone.</p>
  <form method="post" action="/settings/delete/confirm"><input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="token" value="${token}">
    <button class="danger" type="submit">Delete my account for good</button></form>
  <p class="small"><a href="/notes">Keep my account</a></p></div>`
    : html`<div class="narrow card"><h1>This link is not valid any more</h1><p>Links to delete an account work once, for one hour. <a href="/settings/delete">Ask for a new one</a>.</p></div>`;
  return page(layout({ title: "Delete your account", session: await loadSession(deps, request), body }), email ? 200 : 400, { "set-cookie": formCookie(deps, csrf) });
}

/** A refused request: the page again, the message beside the password (never kept) or on top. */
function deletionRefused(deps: Deps): RefusalPage {
  return (e, { s, request }) => {
    const status = refusedStatus(e);
    return status === null || !s ? undefined : deletionPage(deps, s, new URL(request.url), refusedForm(e, {}, ["password"]), status, e.headers);
  };
}

/** Deleting the account: asked for on the account page, confirmed from the mailbox (accounts/deletion.ts does it). */
export const accountDeletionPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .get("/settings/delete", ({ s, request }) => deletionPage(deps, s, new URL(request.url)), { session: "page" })
    .post(
      "/settings/delete",
      async ({ s, body }) => {
        await limit(deps, "deletionPerAccount", s.account.id);
        await requestAccountDeletion(deps, s.account, firstValue(formFields(body).password));
        return back("/settings/delete", "ok", `We sent a link to ${s.account.email}. Follow it within an hour to delete the account.`);
      },
      { session: "form", refused: deletionRefused(deps) },
    )
    .get("/settings/delete/confirm", ({ request, query }) => confirmPage(deps, request, String(query.token ?? "")))
    .post(
      "/settings/delete/confirm",
      async ({ body }) => {
        const email = await deleteAccountByLink(deps, firstValue(formFields(body).token));
        return redirect("/signin?ok=" + encodeURIComponent(`The account ${email} is deleted. Its notes are being erased now.`), { "set-cookie": sessionCookie(deps, "", 0) });
      },
      { publicForm: true, refused: (e, { request, body }) => (e.code === "not_found" ? confirmPage(deps, request, firstValue(formFields(body).token)) : undefined) },
    );
