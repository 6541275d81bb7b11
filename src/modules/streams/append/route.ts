import { TypeCompiler } from "@sinclair/typebox/compiler";
import { Elysia, t } from "elysia";
import type { Ctx } from "../../../deps";
import { assertShallowJson, readUtf8 } from "../../../http/body-limit";
import { AppError, ValidationFailed } from "../../../http/errors";
import type { FastHandler, FastRoute } from "../../../http/fast-route";
import type { AnyAuth } from "../../../http/plugins/auth";
import { bodyKind } from "../../../http/plugins/json-body";
import { send, type Reply } from "../../../http/reply";
import { pathOf } from "../../../lib/url";
import { AppendBody, AppendResponse, type Signal } from "./model";
import { appendByFilename, appendById } from "./service";

// A trailing slash is the same route, as it is for the router.
const BY_FILENAME = /^\/api\/v1\/notes\/by-filename\/([^/]+)\/append\/?$/;
const BY_ID = /^\/api\/v1\/notes\/([^/]+)\/append\/?$/;
const checkBody = TypeCompiler.Compile(AppendBody);

/**
 * The append, once: `POST /api/v1/notes/by-filename/{filename}/append` and
 * `POST /api/v1/notes/{id}/append`. The boundary answers it without the router (appends are what
 * this service exists for, and the router's own work is a large share of one's CPU); the
 * Elysia routes below (appendRoutes) call the same handler, so both answer alike by construction.
 */
export const appendRoute: FastRoute = {
  bucket: "appends",
  match(method: string, path: string): FastHandler | null {
    if (method !== "POST") return null;
    const target = appendTarget(path);
    return target && ((ctx, request) => readAppend(ctx, request, target));
  },
  // The patterns of its two routes in appendRoutes.
  routeOf: (path) => (path.startsWith("/api/v1/notes/by-filename/") ? "/api/v1/notes/by-filename/:filename/append" : "/api/v1/notes/:id/append"),
};

/** The append takes UTF-8 text/plain as well as JSON: the body is then the text (`curl -d 'deploy ok'`). */
export const appendTakesPlainText = (method: string, path: string): boolean => method === "POST" && appendTarget(path) !== null;

/** The same handler for the Elysia routes, which reach it by the same paths. */
function appendFromRouter(ctx: Ctx, request: Request): Promise<Reply<AppendResponse>> {
  return readAppend(ctx, request, appendTarget(pathOf(request.url))!);
}

const detail = (summary: string) => ({
  tags: ["streams"],
  summary,
  // The handler reads the body itself (as the boundary's fast path does), so the schema is documented here.
  requestBody: {
    required: true,
    content: {
      "application/json": { schema: AppendBody },
      "text/plain": { schema: t.String({ description: "The text itself (UTF-8), normalised as the JSON text is" }) },
    },
  },
});

/**
 * The append's Elysia routes: the same handler as the boundary's fast path (appendRoute), here for
 * the OpenAPI document and for requests that reach the router.
 */
export const appendRoutes = (auth: AnyAuth) =>
  new Elysia()
    .use(auth)
    .post("/notes/by-filename/:filename/append", async ({ ctx, request }) => send(await appendFromRouter(ctx, request)), {
      parse: "none",
      params: t.Object({ filename: t.String({ description: "The stream's exact filename, URL-encoded" }) }),
      response: { 200: AppendResponse, 201: AppendResponse },
      detail: detail("Append a line to a stream by filename; the first write creates it (201)"),
    })
    .post("/notes/:id/append", async ({ ctx, request }) => send(await appendFromRouter(ctx, request)), {
      parse: "none",
      params: t.Object({ id: t.String() }),
      response: { 200: AppendResponse },
      detail: detail("Append a line to a stream by id"),
    });

interface AppendTarget {
  /** The path segment as sent, still percent-encoded. */
  raw: string;
  byFilename: boolean;
}

function appendTarget(path: string): AppendTarget | null {
  const byFilename = BY_FILENAME.exec(path);
  if (byFilename) return { raw: byFilename[1]!, byFilename: true };
  const byId = BY_ID.exec(path);
  return byId && { raw: byId[1]!, byFilename: false };
}

function readAppend(ctx: Ctx, request: Request, { raw, byFilename }: AppendTarget): Promise<Reply<AppendResponse>> {
  const kind = bodyKind(request, true);
  return readUtf8(request).then((body) => {
    const { text, status } = kind === "text" ? { text: body, status: undefined } : checked(parseJson(body));
    const signal = status ?? signalOf(request.url);
    const param = decodeParam(raw, byFilename ? "filename" : "id");
    return byFilename ? appendByFilename({ ctx, filename: param, text, signal }) : appendById({ ctx, id: param, text, signal });
  });
}

function checked(body: unknown): { text: string; status?: Signal } {
  if (!checkBody.Check(body)) throw bodyProblem(body);
  return body;
}

const SIGNALS = new Set(["ok", "fail", "start"]);

/** `?status=` (for text/plain bodies, which have no field for it). */
function signalOf(url: string): Signal | undefined {
  if (!url.includes("?")) return undefined;
  const status = new URL(url).searchParams.get("status");
  if (status === null) return undefined;
  if (!SIGNALS.has(status)) throw ValidationFailed.field("status", "invalid", "status must be ok, fail or start");
  return status as Signal;
}

function parseJson(text: string): unknown {
  assertShallowJson(text);
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError("bad_request", "the request body could not be parsed; send JSON with Content-Type: application/json");
  }
}

/** Which part of the body is wrong, in the words of the API's validation details. */
function bodyProblem(body: unknown): ValidationFailed {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    return ValidationFailed.field("body", "invalid_type", "expected object");
  }
  const text = (body as Record<string, unknown>).text;
  if (typeof text === "string") return ValidationFailed.field("status", "invalid", "status must be ok, fail or start");
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
