import { Elysia } from "elysia";
import type { Deps, Scope } from "../../deps";
import { ValidationFailed } from "../../http/errors";
import { iso } from "../../lib/clock";
import { html, page, type Html } from "../../web/html";
import { back, csrfField, flashFrom, layout, secretBox, when } from "../../web/layout";
import { pageMacros } from "../../web/macros";
import type { WebSession } from "../../web/session";
import { describeAccount } from "../accounts/service";
import { recentNotes } from "../notes/repo";
import { listWorkspaceTokens, MAX_EXPIRY_DAYS, mintExtensionToken, mintToken, revokeWorkspaceToken, SCOPES } from "../tokens/service";
import { getWorkspace } from "../workspaces/repo";
import { firstValue, formFields } from "./form";

function noteOptions(deps: Deps, s: WebSession, streamsOnly: boolean): Html {
  const rows = recentNotes(deps, s.workspaceId, 200).filter((n) => !streamsOnly || n.kind === "stream");
  return html`${rows.map((n) => html`<option value="${n.id}">${n.filename ?? n.title}</option>`)}`;
}

function tokensPage(deps: Deps, s: WebSession, url: URL, shown?: Html): Response {
  const rows = listWorkspaceTokens(deps, s.workspaceId);
  const now = deps.clock.now();
  const ws = getWorkspace(deps, s.workspaceId);
  const account = describeAccount({ ctx: s.ctx });
  const subscriber = ws.plan !== "free" && ws.state === "active";
  return page(
    layout({
      title: "API tokens",
      session: s,
      active: "tokens",
      flash: flashFrom(url),
      body: html`<h1>API tokens</h1>${shown ?? ""}
<div class="card"><h2>New token</h2>${
        account.api_access
          ? html`<form method="post" action="/settings/tokens">${csrfField(s)}
  <label><span>Name</span><input type="text" name="name" maxlength="80" placeholder="e.g. deploy pipeline"></label>
  <div class="row mb12">${SCOPES.map((sc) => html`<label class="check"><input type="checkbox" name="scope" value="${sc}" ${sc === "append" ? "checked" : ""}> ${sc}</label>`)}</div>
  <p class="muted small">read: list and read notes · write: create, edit, delete, move and append · append: append only</p>
  <label><span>Only this note (optional)</span><select name="note_id"><option value="">Every note</option>${noteOptions(deps, s, false)}</select></label>
  <label><span>Expires in (days, at most ${MAX_EXPIRY_DAYS})</span><input type="number" name="expires_in_days" min="1" max="${MAX_EXPIRY_DAYS}" value="90"></label>
  <button class="primary">Create token</button></form>`
          : html`<p>The ${account.plan} plan has no API access. Start the API trial on the <a href="/settings">account page</a>, or move to Dev or Team.</p>`
      }</div>
<div class="card"><h2>Your tokens</h2>${
        rows.length === 0
          ? html`<p class="muted">None yet.</p>`
          : html`<table><tr><th>Name</th><th>Scopes</th><th>Note</th><th>Last used</th><th>Expires</th><th></th></tr>${rows.map((t) => {
              const state = t.revokedAt !== null ? "revoked" : t.expiresAt <= now ? "expired" : "active";
              return html`<tr><td>${t.name || html`<span class="muted">unnamed</span>`}${t.kind === "extension" ? html`<span class="badge">extension</span>` : ""}<div class="muted small mono">${t.id}</div></td><td>${t.scopes}</td><td class="small">${t.noteId ?? "all"}</td><td>${when(t.lastUsedAt === null ? null : iso(t.lastUsedAt))}</td><td>${when(iso(t.expiresAt))}</td><td>${
                state === "active"
                  ? html`<form method="post" action="/settings/tokens/${t.id}/revoke">${csrfField(s)}<button class="danger">Revoke</button></form>`
                  : html`<span class="badge">${state}</span>`
              }</td></tr>`;
            })}</table>`
      }</div>
<div class="card"><h2>Browser-extension token</h2>${
        subscriber
          ? html`<p class="small">One append-only token for the browser extension, bound to one stream (60 appends a minute, outside the token cap). A new one replaces the old.</p>
  <form method="post" action="/settings/extension-token" class="row">${csrfField(s)}<select name="note_id" required>${noteOptions(deps, s, true)}</select><button>Create extension token</button></form>`
          : html`<p class="muted small">For subscribers: available on paid plans.</p>`
      }</div>`,
    }),
  );
}

/** API tokens: the list, a new token (shown once), revoking one, and the browser-extension token. */
export const tokenPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .get("/settings/tokens", ({ s, request }) => tokensPage(deps, s, new URL(request.url)), { session: "page" })
    .post(
      "/settings/tokens",
      async ({ s, body, request }) => {
        const b = formFields(body);
        const scopes = ([] as string[]).concat(b.scope ?? []).filter((x): x is Scope => (SCOPES as string[]).includes(x));
        if (scopes.length === 0) throw ValidationFailed.field("scope", "required", "Choose at least one scope.");
        const days = Number(firstValue(b.expires_in_days) || 90);
        const minted = await deps.writer.write(() =>
          mintToken(deps, {
            accountId: s.account.id,
            workspaceId: s.workspaceId,
            scopes,
            noteId: firstValue(b.note_id) || null,
            expiresInDays: days,
            name: firstValue(b.name).slice(0, 80),
          }),
        );
        return tokensPage(deps, s, new URL(request.url), secretBox("new-token", minted.token, "This token is shown only this once. Use it as Authorization: Bearer <token>."));
      },
      { session: "form", refused: "/settings/tokens" },
    )
    .post(
      "/settings/tokens/:id/revoke",
      async ({ s, params }) => {
        await deps.writer.write(() => revokeWorkspaceToken(deps, s.workspaceId, params.id));
        return back("/settings/tokens", "ok", "Token revoked: it answers 401 from now on.");
      },
      { session: "form", refused: "/settings/tokens" },
    )
    .post(
      "/settings/extension-token",
      async ({ s, body, request }) => {
        const noteId = firstValue(formFields(body).note_id);
        const minted = await deps.writer.write(() => mintExtensionToken(deps, { accountId: s.account.id, workspaceId: s.workspaceId, noteId }));
        return tokensPage(deps, s, new URL(request.url), secretBox("ext-token", minted.token, "Paste this into the browser extension. It is shown only this once."));
      },
      { session: "form", refused: "/settings/tokens" },
    );
