import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { Ctx } from "../../deps";
import { AppError, ValidationFailed } from "../../http/errors";
import { isJsonContentType, JSON_BODY_REQUIRED } from "../../http/plugins/json-body";
import type { Reply } from "../../db/commit";
import { jsonDepthExceeds, MAX_JSON_DEPTH } from "../../lib/json-depth";
import { AppendBody, type AppendResponse } from "./model";
import { appendByFilename, appendById } from "./service";

const BY_FILENAME = /^\/api\/v1\/notes\/by-filename\/([^/]+)\/append$/;
const BY_ID = /^\/api\/v1\/notes\/([^/]+)\/append$/;
const checkBody = TypeCompiler.Compile(AppendBody);

/**
 * The two append routes, answered without the router: appends are what this service exists
 * for, and routing, body validation and response encoding cost a fifth of an append. The rules
 * are the same ones: the route's own TypeBox schema (compiled), the same service, the same error
 * envelope (the boundary turns thrown AppErrors into it). Anything else goes to the app.
 */
export function matchAppend(method: string, path: string): ((ctx: Ctx, request: Request) => Promise<Reply<AppendResponse>>) | null {
  if (method !== "POST") return null;
  const byFilename = BY_FILENAME.exec(path);
  const byId = byFilename ? null : BY_ID.exec(path);
  if (!byFilename && !byId) return null;
  const raw = (byFilename ?? byId)![1]!;
  return (ctx, request) =>
    readJson(request).then((body) => {
      if (!checkBody.Check(body)) throw bodyProblem(body);
      const param = decodeParam(raw, byFilename ? "filename" : "id");
      return byFilename ? appendByFilename({ ctx, filename: param, text: body.text }) : appendById({ ctx, id: param, text: body.text });
    });
}

function readJson(request: Request): Promise<unknown> {
  if (!isJsonContentType(request)) throw new AppError("bad_request", JSON_BODY_REQUIRED);
  return request.text().then(parseJson);
}

function parseJson(text: string): unknown {
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) throw new AppError("bad_request", `JSON nested deeper than ${MAX_JSON_DEPTH} levels is refused`);
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError("bad_request", "the request body could not be parsed; send JSON with Content-Type: application/json");
  }
}

/** The details Elysia's validation gives for the same body, so both paths answer alike. */
function bodyProblem(body: unknown): ValidationFailed {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    return ValidationFailed.field("body", "invalid_type", "expected object");
  }
  const text = (body as Record<string, unknown>).text;
  return text === undefined ? ValidationFailed.field("text", "required", "is required") : ValidationFailed.field("text", "invalid_type", "expected string");
}

function decodeParam(raw: string, field: string): string {
  if (!raw.includes("%")) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw ValidationFailed.field(field, "invalid", "is not valid percent-encoded UTF-8");
  }
}
