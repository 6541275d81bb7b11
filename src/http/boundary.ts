import type { Reply } from "./reply";
import type { Deps, IdempotentWrite } from "../deps";
import type { Principal } from "../principal";
import { BILLING_WEBHOOK_PER_MINUTE, bodyCaps, HEALTH_PER_MINUTE } from "../limits/plans";
import { pathOf } from "../lib/url";
import { checkBodyText, limitBody } from "./body-limit";
import { AppError, errorResponse, unauthorized } from "./errors";
import type { FastHandler, FastRoute } from "./fast-route";
import { identifier, clientIp, type Identity, type TokenResolver } from "./identify";
import { idempotency } from "./idempotency";
import { logRequest, requestId } from "./log";
import { rateFor, rateHeaders, rateLimited, tokenRateKey, type RateDecision, type TokenBucket } from "./rate-limit";
import { setRequestState } from "./request-state";
import { addCors, preflight, type CorsPolicy } from "./cors";
import { asForwarded } from "./forwarded";
import { secureResponse } from "./security-headers";
import { routable } from "./short-host";

/** What the features hand the boundary; the composition root (app.ts) wires them. */
export interface BoundaryParts {
  /** Routes answered without the router (the append). */
  fastRoutes: FastRoute[];
  tokens: TokenResolver;
  /** Throws when a stored Idempotency-Key answer may not be replayed any more (a read-only account). */
  assertReplayable: (principal: Principal) => Promise<void>;
  /** The Bearer-only endpoints browser-based clients may call from other origins. */
  cors: CorsPolicy;
  /** A 4xx answered to a token, for its error log (GET /api/v1/errors). */
  onClientError: (e: { principal: Principal; method: string; path: string; status: number; code: string }) => void | Promise<void>;
  /** Told of every answer as it leaves (metrics), when set. */
  observe?: AnswerObserver;
}

/** `route` is the fast route's pattern when one answered, else null (the router's, or none). */
export type AnswerObserver = (method: string, path: string, route: string | null, status: number, started: number) => void;

type Handle = (request: Request) => Response | Promise<Response>;
type FastMatch = { bucket: TokenBucket; handler: FastHandler; route: FastRoute };

const API = "/api/v1/";
/** The only /api/v1 paths answered without a token. */
const PUBLIC_API = new Set(["/api/v1/openapi.json"]);

/**
 * The HTTP boundary, in front of the Elysia app, one straight line per request: request id and
 * log line; for the API, who is asking (identify.ts), the rate limit, the body's size and depth
 * (body-limit.ts), the Idempotency-Key (idempotency.ts), then the fast route or the router; for
 * the rest, per-address limits and body caps, then the router. The app does routing, validation
 * and the work.
 */
export function createHandler(deps: Deps, app: { handle: Handle }, parts: BoundaryParts) {
  const caps = bodyCaps(deps.config.limitProfile);
  const hsts = deps.config.baseUrl?.startsWith("https://") ?? false;
  const identify = identifier(deps, parts.tokens);
  const once = idempotency(deps, parts.assertReplayable);
  const observe = parts.observe;

  /** `peer` is the client's address, or a function that looks it up (a system call most requests never need). */
  const proxied = deps.config.trustProxy > 0 && !deps.config.baseUrl;
  return function handle(request: Request, peer?: string | (() => string | undefined)): Response | Promise<Response> {
    const started = performance.now();
    if (proxied) request = asForwarded(deps, request);
    request = routable(request);
    const id = requestId(request);
    const path = pathOf(request.url);
    let address: string | undefined;
    const ipOf = () => (address ??= clientIp(deps, request, typeof peer === "function" ? peer() : peer));
    const api = path.startsWith(API);
    const fast = api ? matchFast(request.method, path) : null;
    const finish = (response: Response): Response => {
      if (!api) {
        if (!response.headers.has("x-request-id")) response.headers.set("x-request-id", id);
        if (parts.cors.covers(path)) addCors(parts.cors, request, response);
        secureResponse(response, hsts, request.url.startsWith("https:"));
      }
      // The address costs a system call where nothing asked for it yet: only for the log line.
      if (deps.config.logRequests) logRequest(request.method, path, response.status, started, id, ipOf());
      if (observe) observe(request.method, path, fast && fast.route.routeOf(path), response.status, started);
      return response;
    };
    const failed = (e: unknown) => finish(api ? withHeaders(toResponse(e), { "x-request-id": id }) : toResponse(e));
    try {
      // A preflight is answered before any other check: the browser sends it without credentials.
      if (request.method === "OPTIONS" && !api && parts.cors.covers(path)) return finish(preflight(parts.cors, request));
      const answer = api ? handleApi(request, path, ipOf, id, fast) : handleOther(request, path, ipOf, id);
      return answer instanceof Promise ? answer.then(finish, failed) : finish(answer);
    } catch (e) {
      return failed(e);
    }
  };

  /** Every /api/v1 answer carries the request id and the rate-limit headers. */
  function handleApi(request: Request, path: string, ipOf: () => string, id: string, fast: FastMatch | null): Response | Promise<Response> {
    const who = identify(request.headers.get("authorization"), ipOf);
    // A cached token answers at once; only a database lookup makes this a promise.
    return who instanceof Promise ? who.then((w) => handleIdentified(request, path, ipOf, id, fast, w)) : handleIdentified(request, path, ipOf, id, fast, who);
  }

  function handleIdentified(request: Request, path: string, ipOf: () => string, id: string, fast: FastMatch | null, who: Identity): Response | Promise<Response> {
    const method = request.method;
    if ("error" in who) return withHeaders(toResponse(who.error), apiHeaders(who.decision, id));
    if ("anonymous" in who) {
      // Without a token nothing of the request is read, let alone parsed: only the API's own description is public.
      const headers = apiHeaders(who.anonymous, id);
      if (!PUBLIC_API.has(path)) return withHeaders(toResponse(unauthorized("missing Authorization: Bearer <token> header")), headers);
      setRequestState(request, { headers, ip: ipOf() });
      return app.handle(request);
    }
    const principal = who.principal;
    const bucket: TokenBucket = fast ? fast.bucket : bucketOf(method);
    const decision = deps.limiter.consume(tokenRateKey(principal.tokenId, bucket), rateFor(principal, bucket), bucket);
    // Counted in memory (SQLite) the decision is at hand; counted in PostgreSQL it is a round trip.
    return decision instanceof Promise
      ? decision.then((d) => handleDecided(request, path, ipOf, id, fast, principal, d))
      : handleDecided(request, path, ipOf, id, fast, principal, decision);
  }

  function handleDecided(
    request: Request,
    path: string,
    ipOf: () => string,
    id: string,
    fast: FastMatch | null,
    principal: Principal,
    decision: RateDecision,
  ): Response | Promise<Response> {
    const method = request.method;
    const headers = apiHeaders(decision, id);
    if (!decision.allowed) return finishApi(principal, method, path, toResponse(rateLimited(decision)), headers);
    // A fast route without an Idempotency-Key (nearly every append): one promise chain, no router.
    if (fast && request.headers.get("idempotency-key") === null) {
      const failed = (e: unknown) => finishApi(principal, method, path, toResponse(e), headers);
      try {
        const body = limitBody(request, caps.api);
        const ctx = { deps, principal };
        const reply = body instanceof Promise ? body.then((r) => fast.handler(ctx, r)) : fast.handler(ctx, body);
        return reply.then((r) => replyResponse(r, headers), failed);
      } catch (e) {
        return failed(e);
      }
    }
    return handleGeneral(request, path, principal, headers, fast?.handler, ipOf);
  }

  async function handleGeneral(
    request: Request,
    path: string,
    principal: Principal,
    headers: Record<string, string>,
    fast: FastHandler | undefined,
    ipOf: () => string,
  ): Promise<Response> {
    let response: Response;
    try {
      request = await limitBody(request, caps.api);
      const text = await checkBodyText(request);
      response = await once(request, principal, path, text, async (write?: IdempotentWrite) => {
        if (fast) return replyResponse(await fast({ deps, principal, idempotency: write }, request), headers);
        setRequestState(request, { principal, idempotency: write, headers, ip: ipOf() });
        return app.handle(request);
      });
    } catch (e) {
      response = toResponse(e);
    }
    return finishApi(principal, request.method, path, response, headers);
  }

  /** A 4xx goes to the token's error log; the app put the headers on its answer already, others get them now. */
  function finishApi(principal: Principal, method: string, path: string, response: Response, headers: Record<string, string>): Response {
    if (response.status >= 400 && response.status < 500) void recordError(principal, method, path, response);
    return response.headers.has("x-ratelimit-limit") ? response : withHeaders(response, headers);
  }

  async function recordError(principal: Principal, method: string, path: string, response: Response): Promise<void> {
    let code = "unknown";
    try {
      code = ((await response.clone().json()) as { error?: { code?: string } }).error?.code ?? code;
    } catch {}
    await parts.onClientError({ principal, method, path, status: response.status, code });
  }

  function matchFast(method: string, path: string): FastMatch | null {
    for (const route of parts.fastRoutes) {
      const handler = route.match(method, path);
      if (handler) return { bucket: route.bucket, handler, route };
    }
    return null;
  }

  async function handleOther(request: Request, path: string, ipOf: () => string, id: string): Promise<Response> {
    if (path.startsWith("/webhooks/")) {
      return limited(`billing:${ipOf()}`, BILLING_WEBHOOK_PER_MINUTE, async () => {
        const limitedRequest = await limitBody(request, caps.billing);
        await checkBodyText(limitedRequest);
        return app.handle(limitedRequest);
      });
    } else if (path === "/up/deep") {
      return limited(`deep:${ipOf()}`, HEALTH_PER_MINUTE, () => app.handle(request));
    } else if (path.startsWith("/h/")) {
      // Every payload becomes a line of the note, whatever its Content-Type says; its depth is the summary's business.
      const limitedRequest = await limitBody(request, caps.inbox);
      await checkBodyText(limitedRequest, { depth: false, anyType: true });
      return app.handle(limitedRequest);
    }
    // Pages' JSON saves, MCP and OAuth registration: every JSON body the app parses.
    const limitedRequest = await limitBody(request, caps.browser);
    await checkBodyText(limitedRequest);
    setRequestState(limitedRequest, { headers: { "x-request-id": id }, ip: ipOf() });
    return app.handle(limitedRequest);
  }

  async function limited(key: string, limit: number, run: () => Promise<Response> | Response): Promise<Response> {
    const d = await deps.limiter.consume(key, limit, "anonymous");
    const headers = rateHeaders(d, deps.clock.now());
    if (!d.allowed) return withHeaders(toResponse(new AppError("rate_limited", `rate limit of ${limit} per minute from this address reached`)), headers);
    return withHeaders(await run(), headers);
  }

  /** The headers of every /api/v1 answer: the rate limit's and the request id. */
  function apiHeaders(d: RateDecision, id: string): Record<string, string> {
    const headers = rateHeaders(d, deps.clock.now());
    headers["x-request-id"] = id;
    return headers;
  }
}

/** Reads are GET and HEAD (and OPTIONS); any other method is a write, unless a fast route says otherwise. */
function bucketOf(method: string): TokenBucket {
  return method === "GET" || method === "HEAD" || method === "OPTIONS" ? "reads" : "writes";
}

/** A write's reply as an answer, with the headers of every /api/v1 answer. */
function replyResponse(reply: Reply<unknown>, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(reply.body), { status: reply.status, headers: { ...headers, "content-type": "application/json" } });
}

function toResponse(e: unknown): Response {
  if (e instanceof AppError) return errorResponse(e);
  console.error(JSON.stringify({ level: "error", msg: "unhandled error at the boundary", error: String((e as Error)?.stack ?? e) }));
  return errorResponse(new AppError("internal_error", "something went wrong on our side; the request id identifies it in the log"));
}

function withHeaders(response: Response, headers: Record<string, string>): Response {
  for (const [k, v] of Object.entries(headers)) response.headers.set(k, v);
  return response;
}
