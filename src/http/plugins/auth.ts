import { Elysia } from "elysia";
import type { Ctx, Deps } from "../../deps";
import { authenticate } from "../../modules/tokens/service";
import { requestState } from "../boundary";

/**
 * Puts `ctx` on the routes that use this plugin. The boundary has already resolved the token
 * (and rate-limited it); without a token this answers 401.
 */
export function auth(deps: Deps) {
  return new Elysia().resolve({ as: "scoped" }, ({ request }): { ctx: Ctx } => {
    const state = requestState(request);
    const principal = state?.principal ?? authenticate(deps, request.headers.get("authorization"));
    return { ctx: { deps, principal, idempotency: state?.idempotency } };
  });
}

export type AnyAuth = ReturnType<typeof auth>;
