import type { Deps } from "../../deps";
import { unauthorized } from "../errors";
import type { Exchange, Step } from "../exchange";
import { identifier, type TokenResolver } from "../identify";
import { apiHeaders } from "./token-limit";

/** The only /api/v1 paths answered without a token. */
const PUBLIC_API = new Set(["/api/v1/openapi.json"]);

/**
 * Who is asking (identify.ts): a token's principal. Without a token nothing of the request is
 * read, let alone parsed: only the API's own description is public, and it goes to the router.
 */
export function identify(deps: Deps, tokens: TokenResolver, route: (x: Exchange) => Promise<Response>): Step {
  const who = identifier(deps, tokens);
  return async (x, next) => {
    const identity = await who(x.request.headers.get("authorization"), x.ip);
    if ("error" in identity) {
      x.headers = apiHeaders(deps, identity.decision, x.id);
      throw identity.error;
    }
    if ("anonymous" in identity) {
      x.headers = apiHeaders(deps, identity.anonymous, x.id);
      if (!PUBLIC_API.has(x.path)) throw unauthorized("missing Authorization: Bearer <token> header");
      return route(x);
    }
    x.principal = identity.principal;
    return next();
  };
}
