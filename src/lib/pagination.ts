import { ValidationFailed, type FieldProblem } from "../http/errors";

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;
export const MAX_OFFSET = 1_000_000;

export interface Page {
  limit: number;
  offset: number;
}

type Raw = number | string | undefined;

// Plain decimal digits only: Number() would also take "1e3", "0x10", " 5" and "9223372036854775807"
// (as a float SQLite refuses), so a query string is matched before it is converted.
const DIGITS = /^[0-9]+$/;

function wholeNumber(raw: number | string): number | null {
  if (typeof raw === "number") return Number.isSafeInteger(raw) ? raw : null;
  return DIGITS.test(raw) ? Number(raw) : null;
}

/**
 * A count asked for in a query (a list's limit, a stream's last lines): whole digits from 1,
 * `dflt` when absent, and above `max` read as `max` rather than refused.
 */
export function parseCount(raw: Raw, field: string, dflt: number, max: number): FieldProblem | number {
  if (raw === undefined) return dflt;
  const n = wholeNumber(raw);
  if (n === null) return { field, code: "invalid_type", message: `expected a whole number from 1 (larger than ${max} is read as ${max})` };
  if (n < 1) return { field, code: "out_of_range", message: "must be at least 1" };
  return Math.min(n, max);
}

function parseLimit(raw: Raw): FieldProblem | number {
  return parseCount(raw, "limit", DEFAULT_LIMIT, MAX_LIMIT);
}

function parseOffset(raw: Raw): FieldProblem | number {
  if (raw === undefined) return 0;
  const n = wholeNumber(raw);
  if (n === null) return { field: "offset", code: "invalid_type", message: `expected a whole number from 0 to ${MAX_OFFSET}` };
  if (n < 0 || n > MAX_OFFSET) return { field: "offset", code: "out_of_range", message: `must be from 0 to ${MAX_OFFSET}` };
  return n;
}

/**
 * The one pagination rule of every list (REST query strings and MCP numbers alike): limit
 * defaults to 50 and is clamped to 200 rather than refused; offset defaults to 0 and is at most
 * 1,000,000. Anything else is 422 naming the field.
 */
export function pageFrom(query: { limit?: Raw; offset?: Raw }): Page {
  const limit = parseLimit(query.limit);
  const offset = parseOffset(query.offset);
  const problems = [limit, offset].filter((p): p is FieldProblem => typeof p !== "number");
  if (problems.length) throw new ValidationFailed(problems);
  return { limit: limit as number, offset: offset as number };
}

/** RFC 8288 Link header with first, prev, next and last, keeping the request's other query parameters. */
export function linkHeader(url: URL, page: Page, total: number): string {
  const make = (offset: number, rel: string) => {
    const u = new URL(url);
    // A link never carries credentials (http/short-host.ts may have padded the URL with a user name).
    u.username = "";
    u.searchParams.set("limit", String(page.limit));
    u.searchParams.set("offset", String(offset));
    return `<${u.toString()}>; rel="${rel}"`;
  };
  // No link may point past the largest offset a request may name.
  const reachable = Math.floor(MAX_OFFSET / page.limit) * page.limit;
  const lastOffset = Math.min(total === 0 ? 0 : Math.floor((total - 1) / page.limit) * page.limit, reachable);
  const links = [make(0, "first")];
  if (page.offset > 0) links.push(make(Math.max(0, Math.min(page.offset - page.limit, lastOffset)), "prev"));
  if (page.offset + page.limit < total && page.offset + page.limit <= MAX_OFFSET) links.push(make(page.offset + page.limit, "next"));
  links.push(make(lastOffset, "last"));
  return links.join(", ");
}
