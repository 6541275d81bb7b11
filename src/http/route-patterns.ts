interface Node {
  /** The pattern that ends here, by method ("*" for a route of any method). */
  ends: Map<string, string>;
  statics: Map<string, Node>;
  param: Node | null;
  /** A trailing "*": the rest of the path. */
  rest: Map<string, string> | null;
}

const node = (): Node => ({ ends: new Map(), statics: new Map(), param: null, rest: null });

/**
 * Which route pattern of the router's own list a request's path falls under ("/api/v1/notes/:id"),
 * for metrics: ids, filenames and inbox tokens never become a label. A small trie over the
 * patterns' segments, a literal segment before a ":param" as the router prefers, walked once per
 * request; null for a path no route has.
 */
export function routePatterns(routes: readonly { method: string; path: string }[]): (method: string, path: string) => string | null {
  const root = node();
  for (const r of routes) {
    const method = r.method === "ALL" ? "*" : r.method.toUpperCase();
    let at = root;
    const segments = r.path.split("/").filter(Boolean);
    let ended = false;
    for (const s of segments) {
      if (s === "*") {
        at.rest ??= new Map();
        at.rest.set(method, r.path);
        ended = true;
        break;
      }
      if (s.startsWith(":")) at = at.param ??= node();
      else {
        let next = at.statics.get(s);
        if (!next) at.statics.set(s, (next = node()));
        at = next;
      }
    }
    if (!ended && !at.ends.has(method)) at.ends.set(method, r.path === "" ? "/" : r.path);
  }
  // Another method's pattern of the same path (a 405) still names the path, not "unmatched".
  const pick = (m: Map<string, string> | null, method: string): string | null =>
    !m || m.size === 0 ? null : (m.get(method) ?? (method === "HEAD" ? m.get("GET") : undefined) ?? m.get("*") ?? m.values().next().value!);
  const walk = (at: Node, segments: string[], i: number, method: string): string | null => {
    if (i === segments.length) return pick(at.ends, method) ?? pick(at.rest, method);
    const s = segments[i]!;
    const literal = at.statics.get(s);
    const found = (literal && walk(literal, segments, i + 1, method)) ?? (at.param && walk(at.param, segments, i + 1, method)) ?? null;
    return found ?? pick(at.rest, method);
  };
  return (method, path) => walk(root, path.split("/").filter(Boolean), 0, method);
}
