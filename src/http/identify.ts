import type { Deps, Principal } from "../deps";
import { anonymousPerMinute } from "../limits/plans";
import { AppError } from "./errors";
import { rateLimited, type RateDecision } from "./rate-limit";

/** How the boundary turns a Bearer header into a principal; the tokens module provides it. */
export interface TokenResolver {
  /** The secret of an Authorization header; throws a 401 AppError for a malformed one. */
  secretOf(authorization: string): string;
  /** A principal resolved before and still valid, without a query. */
  cached(secret: string): Principal | undefined;
  /** Looks the token up; throws a 401 (or 403) AppError. */
  lookup(secret: string): Principal;
}

export type Identity = { principal: Principal } | { anonymous: RateDecision } | { error: AppError; decision: RateDecision };

/** The client's address: the peer, or with NOTESTREAM_TRUST_PROXY the hop the proxy recorded. */
export function clientIp(deps: Deps, request: Request, peer: string | undefined): string {
  const hops = deps.config.trustProxy;
  if (hops > 0) {
    const chain = (request.headers.get("x-forwarded-for") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
    const ip = chain[chain.length - hops];
    if (ip) return ip;
  }
  return peer ?? "unknown";
}

/**
 * Who is asking. A token already known good costs no query. Any other request first takes an
 * anonymous slot for its address, before the database is asked, so guessing tokens is limited
 * like anonymous traffic; a token that proves good gives the slot back.
 */
export function identifier(deps: Deps, tokens: TokenResolver) {
  const anonymousLimit = anonymousPerMinute(deps.config.limitProfile);
  return function identify(authorization: string | null, ipOf: () => string): Identity {
    let secret: string | AppError | null = null;
    if (authorization !== null) {
      try {
        secret = tokens.secretOf(authorization);
      } catch (e) {
        if (!(e instanceof AppError)) throw e;
        secret = e;
      }
    }
    if (typeof secret === "string") {
      const cached = tokens.cached(secret);
      if (cached) return { principal: cached };
    }
    const ip = ipOf();
    const anon = deps.limiter.consume(`anon:${ip}`, anonymousLimit, "anonymous");
    if (!anon.allowed) return { error: rateLimited(anon), decision: anon };
    if (secret === null) return { anonymous: anon };
    if (secret instanceof AppError) return { error: secret, decision: anon };
    try {
      const principal = tokens.lookup(secret);
      deps.limiter.refund(`anon:${ip}`);
      return { principal };
    } catch (e) {
      if (e instanceof AppError) return { error: e, decision: anon };
      throw e;
    }
  };
}
