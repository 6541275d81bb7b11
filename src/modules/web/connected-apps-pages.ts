import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { iso } from "../../lib/clock";
import { isDocumentClientId } from "../oauth/clients";
import { listGrants, revokeGrant, type Grant } from "../oauth/grants";
import { redirectTarget } from "../oauth/redirects";
import { SCOPE_TEXT } from "../oauth/scopes";
import { html, page, type Html } from "../../web/html";
import { back, csrfField, flashFrom, layout, when } from "../../web/layout";
import { pageMacros } from "../../web/macros";
import type { WebSession } from "../../web/session";

const APPS = "/settings/apps";

/** Who the app is, as far as anyone can tell: the name it gave itself, and the document's host when it has one. */
function appCell(g: Grant): Html {
  const document = isDocumentClientId(g.clientId) ? new URL(g.clientId).host : null;
  return html`<strong>${g.clientName}</strong> <span class="muted small">(unverified name)</span>${
    document ? html`<div class="muted small">described by ${document}</div>` : ""
  }`;
}

async function appsPage(deps: Deps, s: WebSession, url: URL): Promise<Response> {
  const grants = await listGrants(deps, s.account.id);
  const teams = new Map(s.workspaces.filter((w) => w.kind === "team").map((w) => [w.id, w.name]));
  return page(
    layout({
      title: "Connected apps",
      session: s,
      active: "settings",
      flash: flashFrom(url),
      body: html`<h1>Connected apps</h1>
<div class="card"><p class="small">AI clients you allowed to use notestream through its tool server (MCP), such as Claude, Cursor or VS Code. Each named itself when it registered, so the names are unverified; where an app receives its access shows which program it really is. Revoking ends its access at once: it has to ask you again. A new password ends them all.</p>
${
  grants.length === 0
    ? html`<p class="muted">No app has access.</p>`
    : html`<table class="apps"><tr><th>App</th><th>Receives access at</th><th>May</th><th>Allowed</th><th>Last used</th><th></th></tr>${grants.map(
        (g) => html`<tr><td>${appCell(g)}${teams.has(g.workspaceId) ? html`<div class="muted small">in ${teams.get(g.workspaceId)}</div>` : ""}</td><td class="small" data-label="Receives access at">${[...new Set(g.redirectUris.map(redirectTarget))].join(", ")}</td><td class="small" data-label="May">${g.scope.split(" ").map((sc) => html`<div>${SCOPE_TEXT[sc] ?? sc}</div>`)}</td><td data-label="Allowed">${when(iso(g.grantedAt))}</td><td data-label="Last used">${when(g.lastUsedAt === null ? null : iso(g.lastUsedAt))}</td><td><form method="post" action="${APPS}/${g.id}/revoke">${csrfField(s)}<button class="danger" aria-label="Revoke ${g.clientName}">Revoke</button></form></td></tr>`,
      )}</table>`
}</div>`,
    }),
  );
}

/** Connected apps: the OAuth grants the signed-in account gave AI clients, each revocable. */
export const connectedAppsPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .get(APPS, ({ s, request }) => appsPage(deps, s, new URL(request.url)), { session: "page" })
    .post(
      `${APPS}/:id/revoke`,
      async ({ s, params }) => {
        const grant = await deps.writer.write(() => revokeGrant(deps, params.id, s.account.id));
        return back(APPS, "ok", `${grant.clientName} no longer has access: its tokens answer 401 from now on.`);
      },
      { session: "form", refused: APPS },
    );
