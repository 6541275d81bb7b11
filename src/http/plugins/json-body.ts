import { Elysia } from "elysia";
import { pathOf } from "../../lib/url";
import { AppError } from "../errors";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
// text/plain, with no parameter or only charset=utf-8 (quoted or not).
const PLAIN_UTF8 = /^text\/plain\s*(?:;\s*charset\s*=\s*"?utf-?8"?\s*)?$/i;

export const JSON_BODY_REQUIRED = "request bodies must be JSON, sent with Content-Type: application/json";
const JSON_OR_TEXT_BODY_REQUIRED = "send JSON with Content-Type: application/json, or the text itself with Content-Type: text/plain (UTF-8)";

export function isJsonContentType(request: Request): boolean {
  return JSON_TYPE.test(request.headers.get("content-type") ?? "");
}

/** `text/plain` in UTF-8 (stated, or no charset at all). */
export function isPlainTextContentType(request: Request): boolean {
  return PLAIN_UTF8.test(request.headers.get("content-type") ?? "");
}

function hasBody(request: Request): boolean {
  const length = request.headers.get("content-length");
  if (length !== null) return length !== "0";
  // No Content-Length: chunked, or a Request built in-process; only then look at the stream.
  return request.headers.has("transfer-encoding") || request.body !== null;
}

/** A route that also takes a UTF-8 text/plain body, by method and path. */
export type TakesPlainText = (method: string, path: string) => boolean;

/**
 * What the body is, by its Content-Type: JSON, or UTF-8 text where the route takes it (`plainText`).
 * Anything else is a 400 that names what the route accepts.
 */
export function bodyKind(request: Request, plainText: boolean): "json" | "text" {
  if (isJsonContentType(request)) return "json";
  if (plainText && isPlainTextContentType(request)) return "text";
  throw new AppError("bad_request", plainText ? JSON_OR_TEXT_BODY_REQUIRED : JSON_BODY_REQUIRED);
}

/**
 * API request bodies are JSON: a body sent with another Content-Type is a 400 before anything
 * reads it (malformed JSON is Elysia's PARSE error, also answered as 400). The routes matched by
 * `plainText` also take UTF-8 text/plain, and read such a body themselves.
 */
export const jsonBody = (prefix: string, plainText: TakesPlainText[] = []) =>
  new Elysia().onRequest(({ request }) => {
    if (request.method === "GET" || request.method === "HEAD" || !hasBody(request)) return;
    const path = pathOf(request.url);
    if (!path.startsWith(prefix) || isJsonContentType(request)) return;
    bodyKind(request, plainText.some((takes) => takes(request.method, path)));
  });
