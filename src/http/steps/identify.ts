import type { Deps } from "../../deps";
import { unauthorized } from "../errors";
import type { Exchange, Next, Step } from "../exchange";
import { identifier, type Identity, type TokenResolver } from "../identify";
import { apiHeaders } from "./token-limit";

/** The only /api/v1 paths answered without a token. */
const PUBLIC_API = new Set(["/api/v1/openapi.json"]);

/**
 * Who is asking (identify.ts): a token's principal. Without a token nothing of the request is
 * read, let alone parsed: only the API's own description is public, and it goes to the router.
 */
export function identify(deps: Deps, tokens: TokenResolver, route: (x: Exchange) => Promise<Response>): Step {
  const who = identifier(deps, tokens);
  const decided = (x: Exchange, identity: Identity, next: Next): Promise<Response> => {
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
    return next(x);
  };
  return (x, next) => {
    const identity = who(x.request.headers.get("authorization"), x.ip);
    return identity instanceof Promise ? identity.then((i) => decided(x, i, next)) : decided(x, identity, next);
  };
}
