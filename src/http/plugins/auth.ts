import { Elysia } from "elysia";
import type { Ctx, Deps } from "../../deps";
import type { Principal } from "../../principal";
import { requestState } from "../request-state";

/**
 * Puts `ctx` on the routes that use this plugin. The boundary has already resolved the token
 * (and rate-limited it); a request that reaches the app without it (a direct call) is resolved
 * with `authenticate`, which answers 401 without a valid token.
 */
export function auth(deps: Deps, authenticate: (authorization: string | null) => Principal | Promise<Principal>) {
  return new Elysia().resolve({ as: "scoped" }, async ({ request }): Promise<{ ctx: Ctx }> => {
    const state = requestState(request);
    const principal = state?.principal ?? (await authenticate(request.headers.get("authorization")));
    return { ctx: { deps, principal, idempotency: state?.idempotency } };
  });
}

export type AnyAuth = ReturnType<typeof auth>;
