import { Elysia } from "elysia";
import type { Ctx, Deps } from "../../deps";
import { authenticate } from "../../modules/tokens/service";

/** Resolves the Bearer token into `ctx` for the routes that use this plugin; 401 otherwise. */
export function auth(deps: Deps) {
  return new Elysia().resolve({ as: "scoped" }, ({ request }): { ctx: Ctx } => ({
    ctx: { deps, principal: authenticate(deps, request.headers.get("authorization")) },
  }));
}

export type AnyAuth = ReturnType<typeof auth>;
