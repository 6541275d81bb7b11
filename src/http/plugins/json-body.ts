import { Elysia } from "elysia";
import { pathOf } from "../../lib/url";
import { AppError } from "../errors";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export const JSON_BODY_REQUIRED = "request bodies must be JSON, sent with Content-Type: application/json";

export function isJsonContentType(request: Request): boolean {
  return JSON_TYPE.test(request.headers.get("content-type") ?? "");
}

function hasBody(request: Request): boolean {
  const length = request.headers.get("content-length");
  if (length !== null) return length !== "0";
  // No Content-Length: chunked, or a Request built in-process; only then look at the stream.
  return request.headers.has("transfer-encoding") || request.body !== null;
}

/**
 * API request bodies are JSON only: a body sent with another Content-Type is a 400 before
 * anything reads it. (Malformed JSON is Elysia's PARSE error, also answered as 400.)
 */
export const jsonBody = (prefix: string) =>
  new Elysia().onRequest(({ request }) => {
    if (request.method === "GET" || request.method === "HEAD" || !hasBody(request)) return;
    if (!pathOf(request.url).startsWith(prefix)) return;
    if (!isJsonContentType(request)) throw new AppError("bad_request", JSON_BODY_REQUIRED);
  });
