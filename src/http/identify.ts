import type { Deps } from "../deps";
import type { Principal } from "../principal";
import { anonymousPerMinute } from "../limits/plans";
import { AppError } from "./errors";
import { forwardedFor } from "./forwarded";
import { rateLimited, type RateDecision } from "./rate-limit";

/** How the boundary turns a Bearer header into a principal; the tokens module provides it. */
export interface TokenResolver {
  /** The secret of an Authorization header; throws a 401 AppError for a malformed one. */
  secretOf(authorization: string): string;
  /** A principal resolved before and still valid, without a query. */
  cached(secret: string): Principal | undefined;
  /** Looks the token up in the database; rejects with a 401 (or 403) AppError. */
  lookup(secret: string): Promise<Principal>;
}

export type Identity = { principal: Principal } | { anonymous: RateDecision } | { error: AppError; decision: RateDecision };

/** The client's address: the peer, or with NOTESTREAM_TRUST_PROXY the hop the proxy recorded. */
export function clientIp(deps: Deps, request: Request, peer: string | undefined): string {
  return forwardedFor(deps, request) ?? peer ?? "unknown";
}

/**
 * Who is asking. A token already known good costs no query (and no promise: the answer is
 * synchronous). Any other request first takes an anonymous slot for its address, before the
 * database is asked, so guessing tokens is limited like anonymous traffic; a token that proves
 * good gives the slot back.
 *
 * A token asked for again while its lookup is still running (a client's burst before its first
 * answer) waits for that lookup instead of querying again, and takes its slot only if the lookup
 * refuses: as if the requests had come one after the other, the first filling the cache.
 */
export function identifier(deps: Deps, tokens: TokenResolver) {
  const anonymousLimit = anonymousPerMinute(deps.config.limitProfile);
  const lookups = new Map<string, Promise<Principal>>();

  /** A refused lookup, for a request that took its slot (`anon`) or one that waited (takes it now). */
  function refused(e: unknown, ipOf: () => string, anon?: RateDecision): Identity | Promise<Identity> {
    if (!(e instanceof AppError)) throw e;
    const refusal = (decision: RateDecision): Identity => (decision.allowed ? { error: e, decision } : { error: rateLimited(decision), decision });
    if (anon) return refusal(anon);
    const decision = deps.limiter.consume(`anon:${ipOf()}`, anonymousLimit, "anonymous");
    return decision instanceof Promise ? decision.then(refusal) : refusal(decision);
  }

  return function identify(authorization: string | null, ipOf: () => string): Identity | Promise<Identity> {
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
      const running = lookups.get(secret);
      if (running) return running.then((principal): Identity => ({ principal }), (e: unknown) => refused(e, ipOf));
    }
    const ip = ipOf();
    const anon = deps.limiter.consume(`anon:${ip}`, anonymousLimit, "anonymous");
    if (!(anon instanceof Promise)) return afterSlot(secret, ip, ipOf, anon);
    if (typeof secret !== "string") return anon.then((a) => afterSlot(secret, ip, ipOf, a));
    // Counted in PostgreSQL, the slot is a round trip: requests with the same token meanwhile wait
    // for this one's slot and lookup, as for a running lookup, instead of each taking a slot.
    const key = secret;
    const identity = anon.then((a) => afterSlot(key, ip, ipOf, a));
    const principal = identity.then((i) => {
      if ("principal" in i) return i.principal;
      throw "error" in i ? i.error : new AppError("unauthorized", "a token is required");
    });
    principal.catch(() => {});
    lookups.set(key, principal);
    void identity.finally(() => lookups.get(key) === principal && lookups.delete(key)).catch(() => {});
    return identity;
  };

  /** A request without a cached token took an anonymous slot (`anon`): refused, anonymous, or its token looked up. */
  function afterSlot(secret: string | AppError | null, ip: string, ipOf: () => string, anon: RateDecision): Identity | Promise<Identity> {
    if (!anon.allowed) return { error: rateLimited(anon), decision: anon };
    if (secret === null) return { anonymous: anon };
    if (secret instanceof AppError) return { error: secret, decision: anon };
    const key = secret;
    const lookup = tokens.lookup(key);
    lookups.set(key, lookup);
    return lookup.then(
      (principal): Identity => {
        lookups.delete(key);
        deps.limiter.refund(`anon:${ip}`);
        return { principal };
      },
      (e: unknown): Identity | Promise<Identity> => {
        lookups.delete(key);
        return refused(e, ipOf, anon);
      },
    );
  };
}
