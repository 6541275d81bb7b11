// Paths made only of characters the URL parser leaves as they are, and without dot segments.
const PLAIN_PATH = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*$/;

/**
 * `new URL(href).pathname`, without parsing the URL when its path is plain (as every append's
 * is), so the hot path does not pay for the parser on every request. Anything else (percent
 * escapes, dot segments, characters the parser would encode) goes through the parser.
 */
export function pathOf(href: string): string {
  const scheme = href.indexOf("://");
  const start = scheme === -1 ? -1 : href.indexOf("/", scheme + 3);
  if (start !== -1) {
    let end = href.indexOf("?", start);
    const hash = href.indexOf("#", start);
    if (hash !== -1 && (end === -1 || hash < end)) end = hash;
    const raw = end === -1 ? href.slice(start) : href.slice(start, end);
    if (PLAIN_PATH.test(raw) && !raw.includes("/.")) return raw;
  }
  return new URL(href).pathname;
}
