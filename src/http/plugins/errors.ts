import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Elysia, ValidationError } from "elysia";
import { pathOf } from "../../lib/url";
import { AppError, type FieldProblem } from "../errors";

type SchemaError = { path?: unknown; message?: unknown; schema?: unknown; value?: unknown };

/** Turns TypeBox validation errors into validation_failed details: field, code, message. */
export function validationProblems(error: ValidationError): FieldProblem[] {
  const byField = new Map<string, FieldProblem>();
  for (const e of (error.all as SchemaError[]).flatMap(inside)) {
    const path = typeof e.path === "string" ? e.path : "";
    const field = path.replace(/^\//, "").replace(/\//g, ".") || (error.type === "body" ? "body" : error.type);
    const message = typeof e.message === "string" ? e.message : "is invalid";
    const code =
      error.type === "params"
        ? "invalid"
        : valueAt((error as { value?: unknown }).value, path) === undefined
          ? "required"
          : problemCode(message);
    const seen = byField.get(field);
    // A missing property also fails its type check; "required" is the useful one to report.
    if (seen && !(code === "required" && seen.code !== "required")) continue;
    byField.set(field, { field, code, message: friendlyMessage(error.type, code, message, e.schema) });
  }
  return [...byField.values()];
}

/**
 * A union's error (a nullable list, say) names the union, not what is wrong in it. When the value
 * has the shape of exactly one of its kinds (a list where a list or null is taken), that kind's own
 * errors say which item and field: `note.maintenance.0.duration_seconds is required`.
 */
function inside(e: SchemaError): SchemaError[] {
  const variants = (e.schema as { anyOf?: TSchema[] } | undefined)?.anyOf;
  if (!variants || e.value === null || typeof e.value !== "object") return [e];
  const shaped = variants.filter((v) => (Array.isArray(e.value) ? v.type === "array" : v.type === "object"));
  if (shaped.length !== 1) return [e];
  const found = [...Value.Errors(shaped[0]!, e.value)];
  return found.length === 0 ? [e] : found.flatMap((i) => inside({ ...i, path: `${typeof e.path === "string" ? e.path : ""}${i.path}` }));
}

/** The values a field takes, when its schema is a list of them (an enum, or a union of literals). */
function choicesOf(schema: unknown): unknown[] | null {
  const s = schema as { enum?: unknown[]; anyOf?: { const?: unknown }[] } | undefined;
  if (Array.isArray(s?.enum)) return s.enum;
  if (Array.isArray(s?.anyOf) && s.anyOf.length > 0 && s.anyOf.every((v) => v && "const" in v)) return s.anyOf.map((v) => v.const);
  return null;
}

function friendlyMessage(where: string, code: string, message: string, schema: unknown): string {
  // Elysia leaves a path parameter undecoded-and-undefined when its percent-encoding is broken.
  if (where === "params") return "is not valid percent-encoded UTF-8";
  if (code === "required") return "is required";
  const choices = choicesOf(schema);
  if (choices) return `must be one of ${choices.map((c) => JSON.stringify(c)).join(", ")}`;
  if (/union value|expected kind/i.test(message)) return "is not one of the accepted values";
  return message.replace(/^Expected/, "expected");
}

/** The value at a JSON-pointer path, or undefined when something on the way is missing. */
function valueAt(root: unknown, path: string): unknown {
  let v = root;
  for (const key of path.split("/").slice(1)) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[key.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return v;
}

function problemCode(message: string): string {
  if (/required property/i.test(message)) return "required";
  if (/length less/i.test(message)) return "too_long";
  if (/Expected (string|number|integer|boolean|object|array|union)/i.test(message)) return "invalid_type";
  return "invalid";
}

/**
 * The one place an error becomes a response: the envelope of API.md, never a stack trace.
 * `allowedMethods` names the methods a path answers to, so that another method is 405, not 404.
 */
export const errorHandler = (allowedMethods: (path: string) => string[] = () => []) => new Elysia().onError({ as: "global" }, ({ code, error, set, request }) => {
  let app: AppError;
  // A parser hook's own AppError reaches here wrapped in Elysia's ParseError.
  const cause = (error as Error | undefined)?.cause;
  if (error instanceof AppError) {
    app = error;
  } else if (cause instanceof AppError) {
    app = cause;
  } else if (code === "VALIDATION" && (error as ValidationError).type === "response") {
    // The server produced something its own schema refuses: a bug, not the client's fault.
    console.error(JSON.stringify({ level: "error", msg: "response failed its schema", error: String((error as Error).message) }));
    app = new AppError("internal_error", "something went wrong on our side; the request id identifies it in the log");
  } else if (code === "VALIDATION") {
    const problems = validationProblems(error as ValidationError);
    app = new AppError("validation_failed", problems.map((p) => `${p.field}: ${p.message}`).join("; ") || "invalid request", problems);
  } else if (code === "PARSE") {
    app = new AppError("bad_request", "the request body could not be parsed; send JSON with Content-Type: application/json");
  } else if (code === "NOT_FOUND") {
    const allow = allowedMethods(pathOf(request.url));
    app = allow.length
      ? new AppError("method_not_allowed", `${request.method} is not allowed here; this path answers ${allow.join(", ")}`, undefined, { allow: allow.join(", ") })
      : new AppError("not_found", "no such endpoint");
  } else {
    console.error(JSON.stringify({ level: "error", msg: "unhandled error", error: String((error as Error)?.stack ?? error) }));
    app = new AppError("internal_error", "something went wrong on our side; the request id identifies it in the log");
  }
  set.status = app.status;
  Object.assign(set.headers, { "content-type": "application/json; charset=utf-8" }, app.headers);
  return app.toBody();
});
