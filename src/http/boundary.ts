import type { Reply } from "../db/commit";
import type { Deps, Principal } from "../deps";
import { iso } from "../lib/clock";
import { jsonString } from "../lib/text";
import { pathOf } from "../lib/url";
import { randomBase62 } from "../lib/random";
import { logLine } from "./log";
import { isJsonContentType } from "./plugins/json-body";
import { jsonDepthExceeds, MAX_JSON_DEPTH } from "../lib/json-depth";

// Request ids: a random prefix per process and a counter, unique without a random draw per
// request. The counter starts at 36^7, so it has eight base-36 digits without padding (for
// the first 2.8 trillion requests).
const ID_PREFIX = `req_${randomBase62(8)}`;
let idCounter = 36 ** 7;
function nextRequestId(): string {
  return ID_PREFIX + (++idCounter).toString(36);
}
import {
  anonymousPerMinute,
  BILLING_WEBHOOK_PER_MINUTE,
  bodyCaps,
  HEALTH_PER_MINUTE,
  NO_RATE_LIMIT,
} from "../limits/plans";
import { recordApiError } from "../modules/errors/service";
import {
  claimKey,
  idempotencyMethod,
  releaseClaim,
  saveReply,
  storableStatus,
  validateKey,
  type IdempotencyClaim,
} from "../modules/idempotency/service";
import { matchAppend } from "../modules/streams/fast-path";
import { bearerSecret, cachedPrincipal, lookupPrincipal, unauthorized } from "../modules/tokens/service";
import { AppError, errorResponse } from "./errors";
import { rateHeaders, tokenRateKey, type Bucket, type RateDecision } from "./rate-limit";

/** What the boundary learned about a request, handed to the Elysia app (see plugins/auth.ts). */
export interface RequestState {
  principal?: Principal;
  idempotency?: IdempotencyClaim;
  /** Headers for the answer (request id, rate limits), set by the app as it builds it: cheaper than adding them after. */
  headers: Record<string, string>;
  /** The client's address (see NOTESTREAM_TRUST_PROXY), for per-address limits in the app. */
  ip?: string;
}

const states = new WeakMap<Request, RequestState>();
export function requestState(request: Request): RequestState | undefined {
  return states.get(request);
}

const API = "/api/v1/";
/** The only /api/v1 paths answered without a token. */
const PUBLIC_API = new Set(["/api/v1/openapi.json", "/api/v1/docs"]);
const APPEND_PATH = /^\/api\/v1\/notes\/(?:by-filename\/[^/]+|[^/]+)\/append$/;

export function bucketOf(method: string, path: string): Exclude<Bucket, "anonymous"> {
  if (method === "GET" || method === "HEAD" || method === "OPTIONS") return "reads";
  if (method === "POST" && APPEND_PATH.test(path)) return "appends";
  return "writes";
}

type Handle = (request: Request) => Response | Promise<Response>;

/** The client's address: the peer, or with NOTESTREAM_TRUST_PROXY the hop the proxy recorded. */
function clientIp(deps: Deps, request: Request, peer: string | undefined): string {
  const hops = deps.config.trustProxy;
  if (hops > 0) {
    const chain = (request.headers.get("x-forwarded-for") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
    const ip = chain[chain.length - hops];
    if (ip) return ip;
  }
  return peer ?? "unknown";
}

/**
 * The HTTP boundary, in front of the Elysia app: request id and log line, body-size limits
 * (before anything parses a body), rate limits, token resolution and idempotency. Everything
 * here runs in one straight line per request; the app does routing, validation and the work.
 */
export function createHandler(deps: Deps, app: { handle: Handle }) {
  const caps = bodyCaps(deps.config.limitProfile);
  const running = new Set<string>();
  const log = deps.config.logRequests;
  const hsts = deps.config.baseUrl?.startsWith("https://") ?? false;
  const anonymousLimit = anonymousPerMinute(deps.config.limitProfile);

  /** Every /api/v1 answer carries the request id and the rate-limit headers. */
  function handleApi(request: Request, path: string, ip: () => string, id: string): Response | Promise<Response> {
    const method = request.method;
    const who = identify(request.headers.get("authorization"), ip);
    if ("error" in who) return withHeaders(toResponse(who.error), apiHeaders(who.decision, deps.clock.now(), id));
    const principal = "principal" in who ? who.principal : undefined;
    // Without a token nothing of the request is read, let alone parsed: only the API's own
    // description is public.
    if (!principal && !PUBLIC_API.has(path)) {
      const anonymous = (who as { anonymous: RateDecision }).anonymous;
      return withHeaders(toResponse(unauthorized("missing Authorization: Bearer <token> header")), apiHeaders(anonymous, deps.clock.now(), id));
    }
    const append = principal ? matchAppend(method, path) : null;
    let decision: RateDecision;
    if (principal) {
      const bucket = append ? "appends" : bucketOf(method, path);
      decision = deps.limiter.consume(tokenRateKey(principal.tokenId, bucket), perMinute(principal.rate?.[bucket]), bucket);
    } else {
      decision = (who as { anonymous: RateDecision }).anonymous;
    }
    const headers = apiHeaders(decision, deps.clock.now(), id);
    if (!decision.allowed) {
      const refused = toResponse(rateLimited(decision));
      if (principal) void recordError(principal, method, path, refused);
      return withHeaders(refused, headers);
    }
    // An append without an Idempotency-Key (nearly all of them): one promise chain, no router.
    if (append && request.headers.get("idempotency-key") === null) {
      const failed = (e: unknown) => finishApi(principal, method, path, toResponse(e), headers);
      const answer = (reply: Reply<unknown>) => appendAnswer(reply, headers);
      try {
        const body = limitBody(request, caps.api);
        const ctx = { deps, principal: principal! };
        return (body instanceof Promise ? body.then((r) => append(ctx, r)) : append(ctx, body)).then(answer, failed);
      } catch (e) {
        return failed(e);
      }
    }
    return handleGeneral(request, method, path, principal, headers, ip);
  }

  async function handleGeneral(
    request: Request,
    method: string,
    path: string,
    principal: Principal | undefined,
    headers: Record<string, string>,
    ip: () => string,
  ): Promise<Response> {
    let claim: IdempotencyClaim | undefined;
    let response: Response;
    try {
      request = await limitBody(request, caps.api);
      const text = await refuseDeepJson(request);
      const key = request.headers.get("idempotency-key");
      if (key !== null && principal && idempotencyMethod(method)) {
        validateKey(key);
        const body = text ?? (request.body ? new Uint8Array(await request.clone().arrayBuffer()) : "");
        const r = claimKey(deps, running, { tokenId: principal.tokenId, workspaceId: principal.workspaceId, key, method, path, body });
        if ("replay" in r) return withHeaders(replayResponse(r.replay.status, r.replay.body), headers);
        claim = r.claim;
      }
      const append = principal ? matchAppend(method, path) : null;
      if (append) {
        response = appendAnswer(await append({ deps, principal: principal!, idempotency: claim }, request), headers);
      } else {
        states.set(request, { principal, idempotency: claim, headers, ip: ip() });
        response = await app.handle(request);
      }
      if (claim) await storeUnsaved(claim, response);
    } catch (e) {
      response = toResponse(e);
    } finally {
      if (claim) releaseClaim(running, claim);
    }
    return finishApi(principal, method, path, response, headers);
  }

  /** A 4xx is recorded for the token's error log; the app put the headers on its answer already, others get them now. */
  function finishApi(principal: Principal | undefined, method: string, path: string, response: Response, headers: Record<string, string>): Response {
    if (principal && response.status >= 400 && response.status < 500) void recordError(principal, method, path, response);
    return response.headers.has("x-ratelimit-limit") ? response : withHeaders(response, headers);
  }

  /** Writes stored their answer in their own transaction; other answers under 500 are stored here. */
  async function storeUnsaved(claim: IdempotencyClaim, response: Response): Promise<void> {
    if (claim.saved || !storableStatus(response.status)) return;
    const text = await response.clone().text();
    await deps.writer.write(() => saveReply(deps, claim, response.status, text));
  }

  /**
   * Who is asking. A token already known good costs no query. Any other request first takes an
   * anonymous slot for its address, before the database is asked, so guessing tokens is limited
   * like anonymous traffic; a token that proves good gives the slot back.
   */
  function identify(
    authorization: string | null,
    ipOf: () => string,
  ): { principal: Principal } | { anonymous: RateDecision } | { error: AppError; decision: RateDecision } {
    const secret = authorization === null ? null : safely(() => bearerSecret(authorization));
    if (typeof secret === "string") {
      const cached = cachedPrincipal(deps, secret);
      if (cached) return { principal: cached };
    }
    const ip = ipOf();
    const anon = deps.limiter.consume(`anon:${ip}`, anonymousLimit, "anonymous");
    if (!anon.allowed) return { error: rateLimited(anon), decision: anon };
    if (secret === null) return { anonymous: anon };
    if (secret instanceof AppError) return { error: secret, decision: anon };
    try {
      const principal = lookupPrincipal(deps, secret);
      deps.limiter.refund(`anon:${ip}`);
      return { principal };
    } catch (e) {
      if (e instanceof AppError) return { error: e, decision: anon };
      throw e;
    }
  }

  function rateLimited(d: RateDecision): AppError {
    const who = d.bucket === "anonymous" ? "requests without a valid token from this address" : `${d.bucket} for this token`;
    return new AppError("rate_limited", `rate limit of ${d.limit} ${who} per minute reached; retry after the reset`);
  }

  async function recordError(principal: Principal, method: string, path: string, response: Response): Promise<void> {
    let code = "unknown";
    try {
      code = ((await response.clone().json()) as { error?: { code?: string } }).error?.code ?? code;
    } catch {}
    recordApiError(deps, { workspaceId: principal.workspaceId, tokenId: principal.tokenId, method, path, status: response.status, code });
  }

  /**
   * `peer` is the client's address, or a function that looks it up: the address costs a system
   * call, and a request with a known token never needs it.
   */
  return function handle(request: Request, peer?: string | (() => string | undefined)): Response | Promise<Response> {
    const started = performance.now();
    const incoming = request.headers.get("x-request-id");
    const id = incoming && /^[\w.-]{1,64}$/.test(incoming) ? incoming : nextRequestId();
    const path = pathOf(request.url);
    let address: string | undefined;
    const ipOf = () => (address ??= clientIp(deps, request, typeof peer === "function" ? peer() : peer));
    const api = path.startsWith(API);
    const finish = (response: Response): Response => {
      if (!api) {
        if (!response.headers.has("x-request-id")) response.headers.set("x-request-id", id);
        securePage(response, hsts);
      }
      if (log) {
        // Built as a string: the fields are known, and only the method and path need escaping.
        const ms = Math.round((performance.now() - started) * 100) / 100;
        logLine(
          `{"time":"${iso(Date.now())}","level":"info","msg":"request","method":${methodJson(request.method)},"path":${jsonString(redactPath(path))},"status":${response.status},"duration_ms":${ms},"request_id":"${id}"}`,
        );
      }
      return response;
    };
    const failed = (e: unknown) => finish(api ? withHeaders(toResponse(e), { "x-request-id": id }) : toResponse(e));
    let answer: Response | Promise<Response>;
    try {
      answer = api ? handleApi(request, path, ipOf, id) : handleOther(request, path, ipOf, id);
    } catch (e) {
      return failed(e);
    }
    return answer instanceof Promise ? answer.then(finish, failed) : finish(answer);
  };

  async function handleOther(request: Request, path: string, ipOf: () => string, id: string): Promise<Response> {
    if (path.startsWith("/webhooks/")) {
      return limited(`billing:${ipOf()}`, BILLING_WEBHOOK_PER_MINUTE, async () => {
        const limitedRequest = await limitBody(request, caps.billing);
        await refuseDeepJson(limitedRequest);
        return app.handle(limitedRequest);
      });
    } else if (path === "/up/deep") {
      return limited(`deep:${ipOf()}`, HEALTH_PER_MINUTE, () => app.handle(request));
    } else if (path.startsWith("/h/")) {
      return app.handle(await limitBody(request, caps.inbox));
    }
    // Pages' JSON saves, MCP and OAuth registration: every JSON body the app parses.
    const limitedRequest = await limitBody(request, caps.browser);
    await refuseDeepJson(limitedRequest);
    states.set(limitedRequest, { headers: { "x-request-id": id }, ip: ipOf() });
    return app.handle(limitedRequest);
  }

  async function limited(key: string, limit: number, run: () => Promise<Response> | Response): Promise<Response> {
    const d = deps.limiter.consume(key, limit, "anonymous");
    const headers = rateHeaders(d, deps.clock.now());
    if (!d.allowed) return withHeaders(toResponse(new AppError("rate_limited", `rate limit of ${limit} per minute from this address reached`)), headers);
    return withHeaders(await run(), headers);
  }
}

/**
 * What every page may do: load its own script and stylesheet, submit forms to this service, and
 * nothing else: no inline script or style, no framing (the Delete, Revoke and Allow buttons cannot
 * be overlaid by another site), no <base> rewriting. A route that must widen it (the OAuth consent
 * form, whose answer redirects to the client) sets its own policy, which is kept.
 */
export const PAGE_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/**
 * Security headers for everything outside /api/v1 (pages, OAuth, inbox, health). Reset, confirm
 * and inbox tokens live in URLs, so no Referer ever leaves; HSTS only when the service says it is
 * served over https.
 */
function securePage(response: Response, hsts: boolean): void {
  const h = response.headers;
  h.set("x-content-type-options", "nosniff");
  h.set("referrer-policy", "no-referrer");
  if (hsts) h.set("strict-transport-security", "max-age=31536000; includeSubDomains");
  if (h.get("content-type")?.startsWith("text/html")) {
    if (!h.has("content-security-policy")) h.set("content-security-policy", PAGE_POLICY);
    h.set("x-frame-options", "DENY");
  }
}

/** The headers of every /api/v1 answer: the rate limit's and the request id. */
function apiHeaders(d: RateDecision, now: number, id: string): Record<string, string> {
  const headers = rateHeaders(d, now);
  headers["x-request-id"] = id;
  return headers;
}

/** An append's answer, with the headers of every /api/v1 answer. */
function appendAnswer(reply: Reply<unknown>, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(reply.body), { status: reply.status, headers: { ...headers, "content-type": "application/json" } });
}

/** Rate limiting is off in the unlimited profile, but the headers stay numeric. */
export function perMinute(limit: number | null | undefined): number {
  return limit ?? NO_RATE_LIMIT;
}

function safely<T>(run: () => T): T | AppError {
  try {
    return run();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
}

function replayResponse(status: number, body: string): Response {
  return new Response(body, { status, headers: { "content-type": "application/json; charset=utf-8", "idempotent-replay": "true" } });
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

const METHOD_JSON = new Map(["GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS"].map((m) => [m, `"${m}"`]));

/** The method as a JSON string for the log: the usual ones are known. */
function methodJson(method: string): string {
  return METHOD_JSON.get(method) ?? jsonString(method);
}

/** Inbox URLs carry their credential in the path: it never reaches the log. */
function redactPath(path: string): string {
  return path.startsWith("/h/") ? "/h/[redacted]" : path;
}

/**
 * Refuses a body over `cap` bytes with 413 before anything parses it: at once from
 * Content-Length, or while reading a chunked body as soon as it grows past the cap.
 */
export function limitBody(request: Request, cap: number): Request | Promise<Request> {
  // Content-Length first: looking at request.body makes a stream object, which most requests never
  // need; and no promise when there is nothing to wait for (most requests).
  const length = request.headers.get("content-length");
  if (length !== null) {
    if (Number(length) > cap) throw tooLarge(cap);
    return request;
  }
  if (request.body === null) return request;
  return readCapped(request, cap);
}

/**
 * A JSON body nested deeper than MAX_JSON_DEPTH is refused before anything parses it: one linear
 * scan, where parsing, validating or printing such a value recursively would block the event loop
 * or overflow the stack. Returns the body's text when it read it (null for no JSON body).
 */
async function refuseDeepJson(request: Request): Promise<string | null> {
  if (request.body === null || !isJsonContentType(request)) return null;
  const text = await request.clone().text();
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
    throw new AppError("bad_request", `JSON nested deeper than ${MAX_JSON_DEPTH} levels is refused`);
  }
  return text;
}

function tooLarge(cap: number): AppError {
  return new AppError("payload_too_large", `request body is larger than ${cap} bytes`);
}

async function readCapped(request: Request, cap: number): Promise<Request> {
  const reader = request.body!.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > cap) {
      await reader.cancel().catch(() => {});
      throw tooLarge(cap);
    }
    chunks.push(value);
  }
  const headers = new Headers(request.headers);
  headers.set("content-length", String(total));
  return new Request(request.url, { method: request.method, headers, body: Buffer.concat(chunks) });
}
