import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { randomBase62 } from "../../lib/random";
import { sha256Hex } from "../../lib/secrets";
import { html, page } from "../../web/html";
import { layout, redirect } from "../../web/layout";
import { pageMacros } from "../../web/macros";
import { publicOrigin } from "../../http/origin";
import { consentPage, consentPolicy, type AuthorizeParams } from "./consent";
import { resourcesOf } from "./metadata";
import { clientIp, requireSession } from "../../web/guard";
import { documentClient, DocumentRefused } from "./client-document";
import { findClient, isDocumentClientId, type OAuthClient } from "../../modules/oauth/clients";
import { storeCode } from "../../modules/oauth/codes";
import { redirectMatches } from "../../modules/oauth/redirects";
import { normaliseScope } from "../../modules/oauth/scopes";

const CODE_TTL_MS = 10 * 60_000;

type Checked = { error: Response } | { client: OAuthClient; scope: string; resource: string | null; redirectError: (err: string, desc: string) => Response };

const errorPage = (title: string, text: string) => page(layout({ title, body: html`<div class="narrow card"><h1>${title}</h1><p>${text}</p></div>` }), 400);

/** A registered client, or one known by its metadata document (fetched or from the cache). */
async function clientOf(deps: Deps, clientId: string | undefined, request: Request): Promise<OAuthClient | Response> {
  if (clientId && isDocumentClientId(clientId)) {
    try {
      return await documentClient(deps, clientId, clientIp(request));
    } catch (e) {
      if (e instanceof DocumentRefused) return errorPage("Unknown application", `This application names its metadata document as ${clientId}, which cannot be used: ${e.message}.`);
      throw e;
    }
  }
  const client = clientId ? await findClient(deps, clientId) : undefined;
  return client ?? errorPage("Unknown application", "This authorisation request names no registered client.");
}

async function checkAuthorize(deps: Deps, p: AuthorizeParams, request: Request): Promise<Checked> {
  // Until the client and its redirect URI are known good, errors are shown, never redirected.
  const client = await clientOf(deps, p.client_id, request);
  if (client instanceof Response) return { error: client };
  const uris = JSON.parse(client.redirectUris) as string[];
  if (!p.redirect_uri || !redirectMatches(uris, p.redirect_uri)) return { error: errorPage("Bad redirect", "The redirect URI is not one this application registered.") };
  const redirectError = (err: string, desc: string) => {
    const u = new URL(p.redirect_uri!);
    u.searchParams.set("error", err);
    u.searchParams.set("error_description", desc);
    if (p.state) u.searchParams.set("state", p.state);
    return redirect(u.toString());
  };
  if (p.response_type !== "code") return { error: redirectError("unsupported_response_type", "only response_type=code is supported") };
  if (!p.code_challenge || p.code_challenge_method !== "S256") return { error: redirectError("invalid_request", "PKCE with code_challenge_method=S256 is required") };
  // RFC 8707: tokens from here are for this server's MCP endpoint only; the code remembers which
  // spelling was asked for, and the token endpoint holds the exchange to it.
  const resource = p.resource ? p.resource.replace(/\/+$/, "") : null;
  if (resource && !resourcesOf(deps, request).includes(resource)) return { error: redirectError("invalid_target", "this server issues tokens for its own /mcp only") };
  return { client, scope: normaliseScope(p.scope), resource, redirectError };
}

/**
 * The authorization endpoint: the consent page, in the browser with the web app's session, and
 * its answer, which sends a code (PKCE S256 only) or the refusal back to the client's redirect.
 */
export const authorizeRoutes = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .get("/oauth/authorize", async ({ request, query }) => {
      const p = query as AuthorizeParams;
      const checked = await checkAuthorize(deps, p, request);
      if ("error" in checked) return checked.error;
      // After the checks: a bad request is shown as such even before sign-in.
      const s = await requireSession(deps, request);
      return page(consentPage(s, checked.client, checked.scope, p), 200, { "content-security-policy": consentPolicy(p.redirect_uri!) });
    })
    .post(
      "/oauth/authorize",
      async ({ s, request, body }) => {
        const p = body as AuthorizeParams & { decision?: string };
        const checked = await checkAuthorize(deps, p, request);
        if ("error" in checked) return checked.error;
        if (p.decision !== "allow") return checked.redirectError("access_denied", "the user denied access");
        const code = randomBase62(40);
        await deps.writer.write(() =>
          storeCode(deps, {
            codeHash: sha256Hex(code),
            clientId: checked.client.clientId,
            accountId: s.account.id,
            workspaceId: s.workspaceId,
            redirectUri: p.redirect_uri!,
            codeChallenge: p.code_challenge!,
            scope: checked.scope,
            resource: checked.resource,
            expiresAt: deps.clock.now() + CODE_TTL_MS,
          }),
        );
        const u = new URL(p.redirect_uri!);
        u.searchParams.set("code", code);
        if (p.state) u.searchParams.set("state", p.state);
        u.searchParams.set("iss", publicOrigin(deps, request));
        return redirect(u.toString());
      },
      { session: "form" },
    );
