/**
 * Which methods a path answers to, from the router's own route list: a request with another
 * method on a known path is 405 with an Allow header (RFC 9110 §15.5.6), not 404.
 */
export function allowedMethodsIndex(routes: readonly { method: string; path: string }[]): (path: string) => string[] {
  const patterns = routes
    .filter((r) => r.method !== "ALL")
    .map((r) => ({ method: r.method.toUpperCase(), pattern: patternOf(r.path) }));
  return (path) => {
    const methods = new Set(patterns.filter((p) => p.pattern.test(path)).map((p) => p.method));
    if (methods.has("GET")) methods.add("HEAD");
    return [...methods].sort();
  };
}

/** Elysia's path syntax (":param" for one segment, "*" for the rest) as a regular expression. */
function patternOf(path: string): RegExp {
  const body = path
    .split("/")
    .map((segment) => (segment.startsWith(":") ? "[^/]+" : segment === "*" ? ".*" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${body}/?$`);
}
