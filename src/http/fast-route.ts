import type { Reply } from "./reply";
import type { Ctx } from "../deps";
import type { TokenBucket } from "./rate-limit";

/** A route's handler: the request's body is its own to read. */
export type FastHandler = (ctx: Ctx, request: Request) => Promise<Reply<unknown>>;

/**
 * A route the boundary answers without the router: the hot path (appends). The feature declares
 * it once: how it matches, which rate bucket it is charged to, and its handler. The Elysia app
 * registers the same handler under the same path (for the OpenAPI document and direct calls).
 */
export interface FastRoute {
  bucket: TokenBucket;
  /** The handler for this method and path, or null when the route does not match. */
  match(method: string, path: string): FastHandler | null;
  /** The router's pattern of a path this route matched ("/api/v1/notes/:id/append"), for metrics. */
  routeOf(path: string): string;
}

export type FastMatch = { bucket: TokenBucket; handler: FastHandler; route: FastRoute };

export function matchFast(routes: readonly FastRoute[], method: string, path: string): FastMatch | null {
  for (const route of routes) {
    const handler = route.match(method, path);
    if (handler) return { bucket: route.bucket, handler, route };
  }
  return null;
}
