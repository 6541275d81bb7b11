import { linkHeader, type Page } from "../lib/pagination";

/** Lists answer a bare array with X-Total-Count and an RFC 8288 Link header. */
export function listHeaders(request: Request, baseUrl: string | null, page: Page, total: number): Record<string, string> {
  const url = new URL(request.url);
  const base = baseUrl ? new URL(url.pathname + url.search, baseUrl + "/") : url;
  return { "x-total-count": String(total), link: linkHeader(base, page, total) };
}
