import { jsonDepthExceeds, MAX_JSON_DEPTH } from "../lib/json-depth";
import { AppError } from "./errors";
import { isJsonContentType } from "./plugins/json-body";

/**
 * Refuses a body over `cap` bytes with 413 before anything parses it: at once from
 * Content-Length, or while reading a chunked body as soon as it grows past the cap.
 */
export function limitBody(request: Request, cap: number): Request | Promise<Request> {
  // Content-Length first: looking at request.body makes a stream object, which most requests never
  // need; and no promise when there is nothing to wait for (most requests).
  const length = request.headers.get("content-length");
  if (length !== null) {
    if (Number(length) > cap) throw tooLarge(cap);
    return request;
  }
  if (request.body === null) return request;
  return readCapped(request, cap);
}

/**
 * A JSON body nested deeper than MAX_JSON_DEPTH is refused before anything parses it: one linear
 * scan, where parsing, validating or printing such a value recursively would block the event loop
 * or overflow the stack. Returns the body's text when it read it (null for no JSON body).
 */
export async function refuseDeepJson(request: Request): Promise<string | null> {
  if (request.body === null || !isJsonContentType(request)) return null;
  const text = await request.clone().text();
  assertShallowJson(text);
  return text;
}

/** The same rule for a body already read as text (the append route reads its own). */
export function assertShallowJson(text: string): void {
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) throw new AppError("bad_request", `JSON nested deeper than ${MAX_JSON_DEPTH} levels is refused`);
}

function tooLarge(cap: number): AppError {
  return new AppError("payload_too_large", `request body is larger than ${cap} bytes`);
}

async function readCapped(request: Request, cap: number): Promise<Request> {
  const reader = request.body!.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > cap) {
      await reader.cancel().catch(() => {});
      throw tooLarge(cap);
    }
    chunks.push(value);
  }
  const headers = new Headers(request.headers);
  headers.set("content-length", String(total));
  return new Request(request.url, { method: request.method, headers, body: Buffer.concat(chunks) });
}
