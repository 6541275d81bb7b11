import { Elysia } from "elysia";
import type { Deps } from "./deps";
import { createHandler } from "./http/boundary";
import { requestState } from "./http/request-state";
import { recordApiError } from "./modules/api-errors/service";
import { appendRoute, appendRoutes, appendTakesPlainText } from "./modules/streams/append/route";
import { authenticate, bearerSecret, cachedPrincipal, lookupPrincipal } from "./modules/tokens/service";
import { assertWritable, getWorkspace } from "./modules/workspaces/repo";
import { auth } from "./http/plugins/auth";
import { allowedMethodsIndex } from "./http/allowed-methods";
import { errorHandler } from "./http/plugins/errors";
import { jsonBody } from "./http/plugins/json-body";
import { accountRoutes } from "./modules/accounts/routes";
import { billingRoutes } from "./modules/billing/routes";
import { apiErrorsRoutes } from "./modules/api-errors/routes";
import { exportRoutes } from "./modules/export/routes";
import { searchRoutes } from "./modules/search/routes";
import { healthRoutes } from "./modules/health/routes";
import { inboxReceiveRoutes, inboxRoutes } from "./modules/inbox/routes";
import { badgeReadRoutes, badgeRoutes } from "./modules/badges/routes";
import { channelRoutes } from "./modules/channels/routes";
import { digestRoutes } from "./modules/digests/routes";
import { webhookRoutes } from "./modules/webhooks/routes";
import { webRoutes } from "./modules/web/routes";
import { pageErrors } from "./web/page-errors";
import { mcpRoutes } from "./mcp/http";
import { oauthRoutes } from "./mcp/oauth/routes";
import { metricsRoutes } from "./metrics/routes";
import { observeService } from "./observability";
import { foldersRoutes } from "./modules/folders/routes";
import { notesRoutes } from "./modules/notes/routes";
import { snapshotsRoutes } from "./modules/snapshots/routes";
import { streamsRoutes } from "./modules/streams/routes";
import { notestreamApiDocument } from "./api-document";

/** Composes the service from its feature modules. No listen(): see createHandler for the boundary in front. */
export function buildApp(deps: Deps) {
  const authed = auth(deps, (authorization) => authenticate(deps, authorization));
  // Built from the finished app's routes on first use (they are all registered by then).
  let documentOf: () => object = () => ({});
  const api = new Elysia({ prefix: "/api/v1" })
    .get("/openapi.json", () => documentOf(), { detail: { hide: true } })
    .use(appendRoutes(authed))
    .use(streamsRoutes(authed))
    .use(notesRoutes(authed))
    .use(snapshotsRoutes(authed))
    .use(foldersRoutes(authed))
    .use(accountRoutes(authed))
    .use(apiErrorsRoutes(authed))
    .use(webhookRoutes(authed))
    .use(inboxRoutes(authed))
    .use(badgeRoutes(authed))
    .use(channelRoutes(authed))
    .use(digestRoutes(authed))
    .use(exportRoutes(authed))
    .use(searchRoutes(authed));

  // Built from the finished app's routes on first use: a 405 needs to know every route.
  let routesOf: () => readonly { method: string; path: string }[] = () => [];
  let allowed: ((path: string) => string[]) | undefined;
  // No response schema uses t.Transform, so skipping Encode changes nothing but its cost.
  const app = new Elysia({ encodeSchema: false })
    .onRequest(({ request, set }) => {
      const state = requestState(request);
      if (state) Object.assign(set.headers, state.headers);
    })
    // Before the API's handler: the first onError that answers wins, and pages answer in pages.
    .use(pageErrors(deps))
    .use(errorHandler((path) => (allowed ??= allowedMethodsIndex(routesOf()))(path)))
    .use(jsonBody("/api/v1/", [appendTakesPlainText]))
    .use(healthRoutes(deps))
    .use(billingRoutes(deps))
    .use(inboxReceiveRoutes(deps))
    .use(badgeReadRoutes(deps))
    .use(webRoutes(deps))
    .use(mcpRoutes(deps))
    .use(oauthRoutes(deps))
    // Registered only with a token: without one, /metrics is an unknown path like any other.
    .use(deps.config.metricsToken ? metricsRoutes(deps.metrics, deps.config.metricsToken) : new Elysia())
    .use(api);
  routesOf = () => app.routes;
  let apiDoc: object | undefined;
  documentOf = () => (apiDoc ??= notestreamApiDocument(app));
  return app;
}

/**
 * The app behind its HTTP boundary: what the server and the tests call with each request. The
 * boundary is generic; the features it needs (the append route, token lookup, the account state
 * a replay depends on, the API error log) are handed to it here.
 */
/** Called with a Bearer token (or nothing secret) by browser-based MCP clients: no cookies, so CORS is safe. */
const CORS_PATHS = new Set([
  "/mcp",
  "/.well-known/oauth-protected-resource",
  "/.well-known/oauth-protected-resource/mcp",
  "/.well-known/oauth-authorization-server",
  "/oauth/register",
  "/oauth/token",
  "/oauth/revoke",
]);

export function buildHandler(deps: Deps) {
  const app = buildApp(deps);
  return createHandler(deps, app, {
    fastRoutes: [appendRoute],
    tokens: {
      secretOf: bearerSecret,
      cached: (secret) => cachedPrincipal(deps, secret),
      lookup: (secret) => lookupPrincipal(deps, secret),
    },
    assertReplayable: async (principal) => void assertWritable(await getWorkspace(deps, principal.workspaceId)),
    cors: {
      covers: (path) => CORS_PATHS.has(path),
      get origins() {
        return deps.config.mcpAllowedOrigins;
      },
    },
    onClientError: ({ principal, ...e }) => recordApiError(deps, { workspaceId: principal.workspaceId, tokenId: principal.tokenId, ...e }),
    observe: observeService(deps, () => app.routes),
  });
}
