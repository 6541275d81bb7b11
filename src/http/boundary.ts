import type { Deps } from "../deps";
import type { Principal } from "../principal";
import { BILLING_WEBHOOK_PER_MINUTE, bodyCaps, HEALTH_PER_MINUTE } from "../limits/plans";
import { pathOf } from "../lib/url";
import type { CorsPolicy } from "./cors";
import { chain, type Exchange, type Step } from "./exchange";
import { matchFast, type FastRoute } from "./fast-route";
import { asForwarded } from "./forwarded";
import { clientIp, type TokenResolver } from "./identify";
import { requestId } from "./log";
import { routable } from "./short-host";
import { addressLimit } from "./steps/address-limit";
import { answer, type AnswerObserver } from "./steps/answer";
import { apiAnswer, type ClientErrorLog } from "./steps/api-answer";
import { body } from "./steps/body";
import { identify } from "./steps/identify";
import { idempotent } from "./steps/idempotent";
import { answerPreflight } from "./steps/preflight";
import { route } from "./steps/route";
import { tokenLimit } from "./steps/token-limit";

export type { AnswerObserver } from "./steps/answer";

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
  onClientError: ClientErrorLog;
  /** Told of every answer as it leaves (metrics), when set. */
  observe?: AnswerObserver;
}

const API = "/api/v1/";

/**
 * The HTTP boundary, in front of the Elysia app: every request, the append included, goes through
 * one list of named steps (src/http/steps/, one file each), chosen by its path; each step answers
 * itself or passes the request on. The app does routing, validation and the work.
 */
export function createHandler(deps: Deps, app: { handle: (request: Request) => Response | Promise<Response> }, parts: BoundaryParts) {
  const caps = bodyCaps(deps.config.limitProfile);
  const last = route(deps, app);
  const first: Step[] = [answer(deps, parts.cors, parts.observe)];
  const pages: Step[] = [...first, answerPreflight(parts.cors)];
  const api: Step[] = [
    ...first,
    apiAnswer(parts.onClientError),
    identify(deps, parts.tokens, last),
    tokenLimit(deps),
    body(caps.api),
    idempotent(deps, parts.assertReplayable),
  ];
  const billing: Step[] = [...pages, addressLimit(deps, "billing", BILLING_WEBHOOK_PER_MINUTE), body(caps.billing)];
  const deep: Step[] = [...pages, addressLimit(deps, "deep", HEALTH_PER_MINUTE)];
  // Every payload becomes a line of the note, whatever its Content-Type says; its depth is the summary's business.
  const inbox: Step[] = [...pages, body(caps.inbox, { depth: false, anyType: true })];
  // Pages' JSON saves, MCP and OAuth registration: every JSON body the app parses.
  const browser: Step[] = [...pages, body(caps.browser)];
  const [toApi, toBilling, toDeep, toInbox, toBrowser] = [api, billing, deep, inbox, browser].map((steps) => chain(steps, last));
  const runFor = (path: string) =>
    path.startsWith(API) ? toApi! : path.startsWith("/webhooks/") ? toBilling! : path === "/up/deep" ? toDeep! : path.startsWith("/h/") ? toInbox! : toBrowser!;

  const proxied = deps.config.trustProxy > 0 && !deps.config.baseUrl;
  /** `peer` is the client's address, or a function that looks it up (a system call most requests never need). */
  return function handle(request: Request, peer?: string | (() => string | undefined)): Promise<Response> {
    const started = performance.now();
    if (proxied) request = asForwarded(deps, request);
    const forwarded = routable(request);
    const id = requestId(forwarded);
    const path = pathOf(forwarded.url);
    const isApi = path.startsWith(API);
    let address: string | undefined;
    const x: Exchange = {
      request: forwarded,
      path,
      id,
      api: isApi,
      started,
      fast: isApi ? matchFast(parts.fastRoutes, forwarded.method, path) : null,
      ip: () => (address ??= clientIp(deps, forwarded, typeof peer === "function" ? peer() : peer)),
      headers: { "x-request-id": id },
      text: null,
    };
    return runFor(path)(x);
  };
}
