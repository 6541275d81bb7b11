/**
 * Elysia 1.4 finds a request's path with `url.indexOf("/", 11)`, assuming an origin of at least
 * eleven characters (`http://a.bc`). A shorter one (`http://api/up`, `http://ns/`, `https://web/`:
 * hosts that container networks and reverse proxies use) makes it read no path, or a wrong one,
 * and answer 404 or 405 to every routed request. Reported upstream with the reproduction in
 * docs/UPSTREAM.md; until it is fixed there, such a URL reaches the router padded with a user
 * name (`http://__@api/up`): the same origin, host and path to every `new URL()`, and links
 * built from it drop the user name (lib/pagination.ts).
 */
const ELYSIA_PATH_FROM = 11;

/** The request as Elysia can route it: itself unless its path starts before ELYSIA_PATH_FROM. */
export function routable(request: Request): Request {
  const url = request.url;
  const slash = url.indexOf("/", url.indexOf("://") + 3);
  if (slash === -1 || slash >= ELYSIA_PATH_FROM) return request;
  const authority = url.indexOf("://") + 3;
  const padded = `${url.slice(0, authority)}${"_".repeat(Math.max(1, ELYSIA_PATH_FROM - slash - 1))}@${url.slice(authority)}`;
  return new Request(padded, request);
}
