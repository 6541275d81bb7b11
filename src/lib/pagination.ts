export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

export interface Page {
  limit: number;
  offset: number;
}

/** limit defaults to 50 and is clamped to 200 rather than refused. */
export function pageFrom(query: { limit?: number; offset?: number }): Page {
  return { limit: Math.min(query.limit ?? DEFAULT_LIMIT, MAX_LIMIT), offset: query.offset ?? 0 };
}

/** RFC 8288 Link header with first, prev, next and last, keeping the request's other query parameters. */
export function linkHeader(url: URL, page: Page, total: number): string {
  const make = (offset: number, rel: string) => {
    const u = new URL(url);
    u.searchParams.set("limit", String(page.limit));
    u.searchParams.set("offset", String(offset));
    return `<${u.toString()}>; rel="${rel}"`;
  };
  const lastOffset = total === 0 ? 0 : Math.floor((total - 1) / page.limit) * page.limit;
  const links = [make(0, "first")];
  if (page.offset > 0) links.push(make(Math.max(0, Math.min(page.offset - page.limit, lastOffset)), "prev"));
  if (page.offset + page.limit < total) links.push(make(page.offset + page.limit, "next"));
  links.push(make(lastOffset, "last"));
  return links.join(", ");
}
