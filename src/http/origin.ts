import type { Deps } from "../deps";

/**
 * The origin of the links a request is answered with: the configured base URL, else the one the
 * request came to (behind a trusted proxy, the boundary has already put the client's origin there).
 */
export function publicOrigin(deps: Deps, request: Request): string {
  return deps.config.baseUrl ?? new URL(request.url).origin;
}

/** The origin of links in mail sent by background jobs, which have no request to take it from. */
export function mailOrigin(deps: Deps): string {
  return deps.config.baseUrl ?? `http://localhost:${deps.config.port}`;
}
