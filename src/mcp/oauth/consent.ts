import { html, type Html } from "../../web/html";
import { csrfField, layout } from "../../web/layout";
import type { WebSession } from "../../web/session";
import { PAGE_POLICY } from "../../http/security-headers";
import { isDocumentClientId, type OAuthClient } from "../../modules/oauth/clients";
import { isLoopbackRedirect } from "../../modules/oauth/redirects";
import { SCOPE_TEXT } from "../../modules/oauth/scopes";

export const AUTHORIZE_FIELDS = ["response_type", "client_id", "redirect_uri", "code_challenge", "code_challenge_method", "state", "scope", "resource"] as const;
export type AuthorizeParams = Partial<Record<(typeof AUTHORIZE_FIELDS)[number], string>>;

/**
 * Where the code goes, in words a person checks: the name is whatever the registrant typed, the
 * redirect is the one thing that decides who receives the code. Hosts come from the URL parser, so
 * international names show as punycode and cannot imitate another host's letters.
 */
function destination(redirectUri: string): Html {
  const u = new URL(redirectUri);
  if (isLoopbackRedirect(u)) return html`sent back to <strong>an app on this computer</strong> (port ${u.port || "80"})`;
  if (u.protocol === "https:") return html`sent to <strong>${u.host}</strong>`;
  return html`sent to <strong>the app that opens ${u.protocol} links</strong>`;
}

/**
 * The pages' policy, with one more form target: the consent form's answer redirects to the
 * client, and browsers hold that redirect to form-action too. Only the registered redirect's own
 * origin (or private-use scheme) is added, never a wildcard.
 */
export function consentPolicy(redirectUri: string): string {
  const u = new URL(redirectUri);
  const target = u.protocol === "http:" || u.protocol === "https:" ? u.origin : u.protocol;
  return PAGE_POLICY.replace("form-action 'self'", `form-action 'self' ${target}`);
}

/**
 * The consent page. Every client here described itself, so its name is shown as unverified; one
 * known by its metadata document is also named by the document's host, which at least is checked.
 */
export function consentPage(s: WebSession, client: OAuthClient, scope: string, p: AuthorizeParams): Html {
  const clientName = client.clientName;
  const document = isDocumentClientId(client.clientId) ? new URL(client.clientId).host : null;
  const hidden = (name: (typeof AUTHORIZE_FIELDS)[number]) => html`<input type="hidden" name="${name}" value="${p[name] ?? ""}">`;
  return layout({
    title: "Allow access",
    session: s,
    body: html`<div class="narrow card">
  <h1>Allow ${clientName} <span class="muted">(unverified name)</span>?</h1>
  <p><strong>${clientName}</strong> wants to use your notestream account <strong>${s.account.email}</strong> to:</p>
  <ul>${scope.split(" ").map((sc) => html`<li>${SCOPE_TEXT[sc] ?? sc}</li>`)}</ul>
  <p class="small">The name “${clientName}” was supplied by the application itself and is not verified: any program can register under any name. Allow only if you just asked this application to connect.</p>
  ${document ? html`<p class="small">This application is described by a document at <strong>${document}</strong>.</p>` : ""}
  <p class="flash">After you allow, you will be ${destination(p.redirect_uri!)}. If that is not the application you meant, choose Deny.</p>
  <p class="muted small">It will reach notestream through its tool server (MCP). Writes by AI agents need a paid plan. You can revoke access at any time under Account → <a href="/settings/apps">Connected apps</a>.</p>
  <form method="post" action="/oauth/authorize" class="row">${csrfField(s)}
    ${AUTHORIZE_FIELDS.map(hidden)}
    <button class="primary" name="decision" value="allow">Allow</button><button name="decision" value="deny">Deny</button>
  </form>
</div>`,
  });
}
