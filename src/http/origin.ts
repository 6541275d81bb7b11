import type { Deps } from "../deps";

/**
 * The origin of the links a request is answered with: the configured base URL, else the one the
 * request came to (behind a trusted proxy, the boundary has already put the client's origin there).
 * Only for the answer itself: links mailed or kept for later take mailOrigin().
 */
export function publicOrigin(deps: Deps, request: Request): string {
  return deps.config.baseUrl ?? new URL(request.url).origin;
}

/**
 * The origin of every link in a mail (and of anything else kept to be sent later): the configured
 * base URL, else this server on localhost at the port it listens on (the one it got, when told 0),
 * never a request's. A request's Host (or a header a proxy
 * passed through) is the client's to choose; taken into a mail, it would send the recipient, with
 * a genuine message, to a server the client names.
 */
export function mailOrigin(deps: Deps): string {
  return deps.config.baseUrl ?? `http://localhost:${deps.config.port}`;
}
