import type { Deps } from "../../deps";
import type { Exchange, Next, Step } from "../exchange";
import { rateFor, rateHeaders, rateLimited, tokenRateKey, type RateDecision, type TokenBucket } from "../rate-limit";

/** The token's rate limit, in the fast route's bucket or by method; a 429 carries `Retry-After`. */
export function tokenLimit(deps: Deps): Step {
  const decided = (x: Exchange, decision: RateDecision, next: Next): Promise<Response> => {
    x.headers = apiHeaders(deps, decision, x.id);
    if (!decision.allowed) throw rateLimited(decision);
    return next(x);
  };
  return (x, next) => {
    const principal = x.principal!;
    const bucket: TokenBucket = x.fast ? x.fast.bucket : bucketOf(x.request.method);
    const decision = deps.limiter.consume(tokenRateKey(principal.tokenId, bucket), rateFor(principal, bucket), bucket);
    return decision instanceof Promise ? decision.then((d) => decided(x, d, next)) : decided(x, decision, next);
  };
}

/** The headers of every /api/v1 answer: the rate limit's and the request id. */
export function apiHeaders(deps: Deps, d: RateDecision, id: string): Record<string, string> {
  const headers = rateHeaders(d, deps.clock.now());
  headers["x-request-id"] = id;
  return headers;
}

/** Reads are GET and HEAD (and OPTIONS); any other method is a write, unless a fast route says otherwise. */
function bucketOf(method: string): TokenBucket {
  return method === "GET" || method === "HEAD" || method === "OPTIONS" ? "reads" : "writes";
}
