import { Elysia } from "elysia";
import { AppError } from "../errors";

/**
 * Request bodies are JSON only: another Content-Type or malformed JSON is a 400 bad_request in
 * the envelope, before any route sees the body.
 */
export const jsonBody = () => new Elysia().onParse({ as: "global" }, async ({ request }) => {
  const text = await request.text();
  if (text.length === 0) return null;
  const type = request.headers.get("content-type")?.toLowerCase() ?? "";
  if (!/^application\/(.+\+)?json\b/.test(type)) {
    throw new AppError("bad_request", "request bodies must be JSON, sent with Content-Type: application/json");
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError("bad_request", "the request body is not valid JSON");
  }
});
