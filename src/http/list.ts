import { t } from "elysia";
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, linkHeader, pageFrom, type Page } from "../lib/pagination";

/**
 * A query parameter documented as the integer it is but handed to the handler as sent: Elysia's
 * own number coercion takes "1e3" and "0x10" and turns 9223372036854775807 into a float, and
 * parsing in the handler lets authentication answer before validation. pageFrom holds the rule.
 */
const queryInteger = (options: { minimum: number; maximum: number; default: number; description: string }) =>
  t.Optional(t.Unsafe<string | number>(t.Any({ type: "integer", ...options })));

/** limit and offset, spread into the query schema of every list; read them with pageFrom(query). */
export const PageQuery = {
  limit: queryInteger({
    minimum: 1,
    maximum: MAX_LIMIT,
    default: DEFAULT_LIMIT,
    description: `How many to return: default ${DEFAULT_LIMIT}; a larger value than ${MAX_LIMIT} is not refused but clamped to ${MAX_LIMIT}`,
  }),
  offset: queryInteger({ minimum: 0, maximum: MAX_OFFSET, default: 0, description: `How many to skip, at most ${MAX_OFFSET}` }),
};

/** Lists answer a bare array with X-Total-Count and an RFC 8288 Link header. */
export function listHeaders(request: Request, baseUrl: string | null, page: Page, total: number): Record<string, string> {
  const url = new URL(request.url);
  const base = baseUrl ? new URL(url.pathname + url.search, baseUrl + "/") : url;
  return { "x-total-count": String(total), link: linkHeader(base, page, total) };
}

/**
 * Every list route's answer: the page its query asks for, the list's items on that page as a
 * bare array, and the list headers (with any `extraHeaders` the list adds after them).
 */
export async function listAnswer<L extends { items: unknown[]; total: number }>(
  route: { request: Request; query: { limit?: string | number; offset?: string | number }; set: { headers: object }; baseUrl: string | null },
  list: (page: Page) => L | Promise<L>,
  extraHeaders?: (list: L) => Record<string, string>,
): Promise<L["items"]> {
  const page = pageFrom(route.query);
  const result = await list(page);
  Object.assign(route.set.headers, listHeaders(route.request, route.baseUrl, page, result.total), extraHeaders?.(result));
  return result.items;
}
