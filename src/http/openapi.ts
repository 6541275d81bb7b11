/**
 * The API's OpenAPI 3.1 document, in the shape client generators accept. Elysia's plugin reads the
 * routes' TypeBox schemas; what it writes is close but not what generators want: models inline with
 * an `$id`, Elysia's lenient integers as "string or integer", OpenAPI 3.0's `nullable` beside 3.1's
 * null types, form and multipart bodies the API refuses, no error answers or headers. This takes
 * that draft and makes it the published contract: named schemas under components with `$ref`,
 * plain 3.1 types, JSON-only bodies (and text/plain where a route takes it), every error status a
 * route can answer with the envelope, and the headers every answer carries. Generic: what is
 * specific to notestream (its extra paths, which routes lock) is handed in.
 */
import { toOpenAPISchema } from "@elysiajs/openapi";
import { codeToStatus, type ErrorCode } from "./errors";

// biome-ignore lint: JSON Schema is open-ended.
type Json = any;

export interface DocumentOptions {
  info: { title: string; version: string; description?: string };
  /** Only paths with this prefix are part of the API (pages, OAuth forms and the rest are not). */
  prefix: string;
  /** Paths served outside the prefix that API users meet, described by hand (their own security). */
  extraPaths?: Record<string, Json>;
  /** More error statuses for some operations ("METHOD /path"), beyond the rules of errorStatuses(). */
  moreErrors?: Record<string, number[]>;
  /** Operations that are not behind the bearer token (e.g. the document itself). */
  publicPaths?: Set<string>;
}

const STATUS_TEXT: Record<number, string> = {
  400: "Malformed request: the body is not valid JSON, a wrong Content-Type, or a malformed header",
  401: "Missing, unknown, expired or revoked token",
  403: "The token's scope, the plan, the account's state or a cap does not allow it",
  404: "No such resource for this token (a foreign id looks exactly like a missing one)",
  405: "Method not allowed on this path (see Allow)",
  409: "A unique name is taken, or the same Idempotency-Key is still being processed",
  413: "The body is over the size limit, refused before parsing",
  422: "Well-formed but invalid (details name each field), or an Idempotency-Key reused for another request",
  423: "The API may not change this content (an append-only or rich-text note)",
  429: "Rate limited: retry after Retry-After seconds",
  500: "Internal error (never with a stack trace)",
  507: "The server's disk is full: this write could not be stored; retry after Retry-After seconds (deleting notes and purging the trash still work)",
};

const codesFor = (status: number) => (Object.keys(codeToStatus) as ErrorCode[]).filter((c) => codeToStatus[c] === status);

const RATE_HEADERS = {
  "X-RateLimit-Limit": { $ref: "#/components/headers/X-RateLimit-Limit" },
  "X-RateLimit-Remaining": { $ref: "#/components/headers/X-RateLimit-Remaining" },
  "X-RateLimit-Reset": { $ref: "#/components/headers/X-RateLimit-Reset" },
  "X-RateLimit-Bucket": { $ref: "#/components/headers/X-RateLimit-Bucket" },
};

function components(): Json {
  const responses: Json = {};
  for (const status of Object.keys(STATUS_TEXT).map(Number)) {
    responses[`E${status}`] = {
      description: STATUS_TEXT[status],
      headers: { ...RATE_HEADERS, ...(status === 429 || status === 507 ? { "Retry-After": { $ref: "#/components/headers/Retry-After" } } : {}), ...(status === 405 ? { Allow: { schema: { type: "string" }, description: "The methods this path answers" } } : {}) },
      content: { "application/json": { schema: { $ref: `#/components/schemas/Error${status}` } } },
    };
  }
  const schemas: Json = {
    Error: {
      type: "object",
      description: "Every error answer: one envelope, one code from a closed list",
      required: ["error"],
      properties: {
        error: {
          type: "object",
          required: ["code", "message"],
          properties: {
            code: { type: "string", enum: Object.keys(codeToStatus) },
            message: { type: "string", description: "For people; may change. Program against code." },
            details: { description: "validation_failed: an array of {field, code, message, index?}; cap_exceeded: {cap, limit, used}" },
          },
        },
      },
    },
    FieldProblem: {
      type: "object",
      required: ["field", "code", "message"],
      properties: { field: { type: "string" }, code: { type: "string" }, message: { type: "string" }, index: { type: "integer", description: "The item of a bulk request" } },
    },
  };
  // One schema per status, its code narrowed to the codes that status carries, so a generated
  // client knows which codes to expect where.
  for (const status of Object.keys(STATUS_TEXT).map(Number)) {
    schemas[`Error${status}`] = {
      allOf: [{ $ref: "#/components/schemas/Error" }, { type: "object", properties: { error: { type: "object", properties: { code: { type: "string", enum: codesFor(status) } } } } }],
    };
  }
  return {
    securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "An API token (nst_…) or an OAuth access token" } },
    schemas,
    responses,
    headers: {
      "X-RateLimit-Limit": { description: "Requests allowed in the current window of this bucket", schema: { type: "integer" } },
      "X-RateLimit-Remaining": { description: "Requests left in the current window", schema: { type: "integer" } },
      "X-RateLimit-Reset": { description: "When the window resets (UTC epoch seconds)", schema: { type: "integer" } },
      "X-RateLimit-Bucket": { description: "Which budget this request used", schema: { type: "string", enum: ["reads", "writes", "appends", "anonymous"] } },
      "Retry-After": { description: "Seconds to wait before retrying", schema: { type: "integer" } },
      "X-Total-Count": { description: "How many items the whole list has", schema: { type: "integer" } },
      Link: { description: 'RFC 8288 links to the "next", "prev", "first" and "last" pages', schema: { type: "string" } },
      "Idempotent-Replay": { description: "true when this is the stored answer of an earlier request with the same Idempotency-Key", schema: { type: "string", enum: ["true"] } },
    },
    parameters: {
      IdempotencyKey: {
        name: "Idempotency-Key",
        in: "header",
        required: false,
        description: "1 to 255 characters. For 24 hours a repeat of the same request with the same key gets the stored answer and writes nothing (keyed per token).",
        schema: { type: "string", minLength: 1, maxLength: 255 },
      },
    },
  };
}

/**
 * Elysia writes a file answer (t.File) as text/plain, with TypeBox's own keywords in its schema, so
 * a generated client would read the bytes as text. The document says what is sent: the media type
 * t.File names (application/octet-stream when it names none), as binary.
 */
function fileContent(content: Json): Json {
  const schema = content["text/plain"]?.schema;
  if (schema?.type !== "string" || schema.format !== "binary") return content;
  const types = [schema.extension ?? "application/octet-stream"].flat() as string[];
  return Object.fromEntries(types.map((type) => [type, { schema: { type: "string", format: "binary" } }]));
}

const isLenientInteger = (s: Json) => s && s.type === "string" && (s.format === "integer" || s.format === "numeric");

/** Rewrites one schema: hoists named models, plain 3.1 types. `named` collects the models. */
function normalise(schema: Json, named: Record<string, Json>): Json {
  if (Array.isArray(schema)) return schema.map((s) => normalise(s, named));
  if (!schema || typeof schema !== "object") return schema;
  let s: Json = { ...schema };
  delete s.nullable;
  // Elysia's t.Integer/t.Numeric read query strings too; the document says what is sent: a number.
  if (Array.isArray(s.anyOf) && s.anyOf.length === 2 && s.anyOf.some(isLenientInteger)) {
    const number = s.anyOf.find((x: Json) => !isLenientInteger(x));
    const { anyOf: _drop, ...outer } = s;
    s = { ...number, ...outer };
    delete s.nullable;
  }
  for (const key of Object.keys(s)) {
    if (key === "properties" || key === "patternProperties" || key === "$defs") {
      s[key] = Object.fromEntries(Object.entries(s[key] as Record<string, Json>).map(([k, v]) => [k, normalise(v, named)]));
    } else if (typeof s[key] === "object" && key !== "enum" && key !== "const" && key !== "default" && key !== "examples") {
      s[key] = normalise(s[key], named);
    }
  }
  // [X, null] with X a plain typed schema reads better (and generates better) as type: [t, "null"].
  if (Array.isArray(s.anyOf) && s.anyOf.length === 2) {
    const nul = s.anyOf.findIndex((x: Json) => x && x.type === "null" && Object.keys(x).length === 1);
    const other = s.anyOf[1 - nul];
    if (nul >= 0 && other && typeof other.type === "string" && !other.$ref && !other.anyOf && !other.enum) {
      const { anyOf: _drop, ...outer } = s;
      s = { ...other, ...outer, type: [other.type, "null"] };
    }
  }
  const id = typeof s.$id === "string" ? /^#\/components\/schemas\/(\w+)$/.exec(s.$id)?.[1] : undefined;
  if (id) {
    delete s.$id;
    named[id] = s;
    return { $ref: `#/components/schemas/${id}` };
  }
  return s;
}

/** Which error statuses an operation can answer, from what it takes. */
function errorStatuses(method: string, path: string, op: Json, isPublic: boolean): number[] {
  const out = new Set<number>([400, 429, 500]);
  if (!isPublic) out.add(401).add(403);
  if (path.includes("{")) out.add(404);
  if ((op.parameters ?? []).some((p: Json) => p.in === "query") || op.requestBody) out.add(422);
  if (op.requestBody) out.add(413);
  if (method === "post" || method === "patch" || method === "delete") out.add(409).add(422).add(507);
  return [...out].sort();
}

/** The API document for an Elysia app. */
export function apiDocument(app: Parameters<typeof toOpenAPISchema>[0], opts: DocumentOptions): Json {
  const draft = toOpenAPISchema(app, undefined, undefined, undefined, "3.1.0") as Json;
  const named: Record<string, Json> = {};
  const paths: Json = {};
  for (const [path, item] of Object.entries(draft.paths as Record<string, Json>)) {
    if (!path.startsWith(opts.prefix)) continue;
    const isPublic = opts.publicPaths?.has(path) ?? false;
    const out: Json = {};
    for (const [method, raw] of Object.entries(item as Record<string, Json>)) {
      if (raw?.hide) continue;
      const op = normalise(raw, named);
      if (op.requestBody?.content) {
        // Only what the API reads: JSON, and text/plain where the route says so.
        const { "application/json": json, "text/plain": text } = op.requestBody.content;
        op.requestBody.content = { ...(json ? { "application/json": json } : {}), ...(text ? { "text/plain": text } : {}) };
      }
      op.parameters = op.parameters ?? [];
      if (["post", "patch", "delete"].includes(method)) op.parameters.push({ $ref: "#/components/parameters/IdempotencyKey" });
      if (op.parameters.length === 0) delete op.parameters;
      op.operationId = operationId(method, path, opts.prefix);
      const responses: Json = {};
      for (const [status, r] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
        const listHeaders = r?.content?.["application/json"]?.schema?.type === "array" ? { "X-Total-Count": { $ref: "#/components/headers/X-Total-Count" }, Link: { $ref: "#/components/headers/Link" } } : {};
        const description = r.description?.startsWith("Response for status") ? describeSuccess(Number(status)) : r.description;
        const content = r?.content ? { content: fileContent(r.content) } : {};
        responses[status] = { ...r, ...content, description, headers: { ...RATE_HEADERS, ...listHeaders, ...(["post", "patch", "delete"].includes(method) ? { "Idempotent-Replay": { $ref: "#/components/headers/Idempotent-Replay" } } : {}) } };
      }
      if (Object.keys(responses).length === 0) responses["200"] = { description: describeSuccess(200), headers: { ...RATE_HEADERS } };
      const extra = opts.moreErrors?.[`${method.toUpperCase()} ${path}`] ?? [];
      for (const status of [...errorStatuses(method, path, op, isPublic), ...extra]) responses[String(status)] = { $ref: `#/components/responses/E${status}` };
      op.responses = responses;
      if (isPublic) op.security = [];
      out[method] = op;
    }
    if (Object.keys(out).length) paths[path] = out;
  }
  Object.assign(paths, opts.extraPaths ?? {});
  const base = components();
  return {
    openapi: "3.1.0",
    info: opts.info,
    jsonSchemaDialect: "https://spec.openapis.org/oas/3.1/dialect/base",
    security: [{ bearer: [] }],
    paths,
    components: { ...base, schemas: { ...base.schemas, ...named } },
  };
}

function describeSuccess(status: number): string {
  return status === 201 ? "Created" : status === 202 ? "Accepted" : status === 204 ? "No content" : "OK";
}

/** listNotes-style ids: method and path words, stable across releases. */
function operationId(method: string, path: string, prefix: string): string {
  const words = path
    .slice(prefix.length)
    .split("/")
    .filter(Boolean)
    .map((w) => (w.startsWith("{") ? `by ${w.slice(1, -1)}` : w))
    .join(" ")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  const camel = [method, ...words].map((w, i) => (i === 0 ? w.toLowerCase() : w[0]!.toUpperCase() + w.slice(1).toLowerCase())).join("");
  return camel;
}
