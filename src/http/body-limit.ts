import { jsonDepthExceeds, MAX_JSON_DEPTH } from "../lib/json-depth";
import { AppError } from "./errors";
import { isJsonContentType } from "./plugins/json-body";

/**
 * How much of a refused body is read and thrown away before the 413 goes out. A client that sends
 * its whole body before it reads (Python's urllib, most HTTP libraries) gets a broken pipe instead
 * of the answer when the server closes the connection under it; past this bound it gets that
 * anyway, and the server stops reading for it.
 */
export const DISCARD_MAX = 16 * 1024 * 1024;

/**
 * Refuses a body over `cap` bytes with 413 before anything parses it: from Content-Length, or
 * while reading a chunked body as soon as it grows past the cap. Either way what the client still
 * sends, up to DISCARD_MAX in all, is read and discarded first, so that the answer reaches it.
 */
export function limitBody(request: Request, cap: number): Request | Promise<Request> {
  // Content-Length first: looking at request.body makes a stream object, which most requests never
  // need; and no promise when there is nothing to wait for (most requests).
  const length = request.headers.get("content-length");
  if (length !== null) {
    const declared = Number(length);
    if (declared > cap) return declared <= DISCARD_MAX ? discard(request, 0).then(() => Promise.reject(tooLarge(cap))) : Promise.reject(tooLarge(cap));
    return request;
  }
  if (request.body === null) return request;
  return readCapped(request, cap);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A body's bytes as text, refused with 400 when they are not UTF-8: decoding them leniently would
 * store U+FFFD in place of what the client sent, changed without a word.
 */
export function utf8Text(bytes: ArrayBuffer | Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new AppError("bad_request", "the request body is not valid UTF-8; send text encoded as UTF-8");
  }
}

/** `request.text()`, refusing bytes that are not UTF-8 (utf8Text). */
export function readUtf8(request: Request): Promise<string> {
  return request.arrayBuffer().then(utf8Text);
}

const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(?:;|$)/i;
const TEXT_TYPE = /^text\//i;

/**
 * Checks a body the app will read as text, before it does: UTF-8 throughout (utf8Text), a form's
 * percent-escapes too (URLSearchParams would turn `%FF` into U+FFFD), and JSON no deeper than
 * MAX_JSON_DEPTH, which is refused before anything parses it: one linear scan, where parsing,
 * validating or printing such a value recursively would block the event loop or overflow the
 * stack. `anyType` checks every body's bytes, whatever its Content-Type says (the inbox turns every
 * payload into a line). Returns the text of a JSON body (null for any other).
 */
export async function checkBodyText(request: Request, { depth = true, anyType = false } = {}): Promise<string | null> {
  if (request.body === null) return null;
  const type = request.headers.get("content-type") ?? "";
  const json = isJsonContentType(request);
  const form = FORM_TYPE.test(type);
  if (!json && !form && !anyType && !TEXT_TYPE.test(type)) return null;
  const text = utf8Text(await request.clone().arrayBuffer());
  if (form) assertFormUtf8(text);
  if (!json) return null;
  if (depth) assertShallowJson(text);
  return text;
}

function assertFormUtf8(text: string): void {
  if (!text.includes("%")) return;
  for (const part of text.split(/[&=]/)) {
    try {
      decodeURIComponent(part.replaceAll("+", " "));
    } catch {
      throw new AppError("bad_request", "the form holds a value that is not percent-encoded UTF-8");
    }
  }
}

/** The same rule for a body already read as text (the append route reads its own). */
export function assertShallowJson(text: string): void {
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) throw new AppError("bad_request", `JSON nested deeper than ${MAX_JSON_DEPTH} levels is refused`);
}

/** The connection closes after it: what is left of the body would be read as the next request. */
function tooLarge(cap: number): AppError {
  return new AppError("payload_too_large", `request body is larger than ${cap} bytes`, undefined, { connection: "close" });
}

/** Reads what is left of a body and drops it, up to DISCARD_MAX bytes counting the `read` already taken. */
async function discard(request: Request, read: number, reader = request.body?.getReader()): Promise<void> {
  if (!reader) return;
  try {
    while (read <= DISCARD_MAX) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
    await reader.cancel();
  } catch {}
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
      await discard(request, total, reader);
      throw tooLarge(cap);
    }
    chunks.push(value);
  }
  const headers = new Headers(request.headers);
  headers.set("content-length", String(total));
  return new Request(request.url, { method: request.method, headers, body: Buffer.concat(chunks) });
}
