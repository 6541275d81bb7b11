import { Elysia, ValidationError } from "elysia";
import { pathOf } from "../../lib/url";
import { AppError, type FieldProblem } from "../errors";

/** Turns TypeBox validation errors into validation_failed details: field, code, message. */
export function validationProblems(error: ValidationError): FieldProblem[] {
  const byField = new Map<string, FieldProblem>();
  for (const e of error.all) {
    const path = "path" in e && typeof e.path === "string" ? e.path : "";
    const field = path.replace(/^\//, "").replace(/\//g, ".") || (error.type === "body" ? "body" : error.type);
    const message = "message" in e && typeof e.message === "string" ? e.message : "is invalid";
    const code =
      error.type === "params"
        ? "invalid"
        : valueAt((error as { value?: unknown }).value, path) === undefined
          ? "required"
          : problemCode(message);
    const seen = byField.get(field);
    // A missing property also fails its type check; "required" is the useful one to report.
    if (seen && !(code === "required" && seen.code !== "required")) continue;
    byField.set(field, { field, code, message: friendlyMessage(error.type, code, message) });
  }
  return [...byField.values()];
}

function friendlyMessage(where: string, code: string, message: string): string {
  // Elysia leaves a path parameter undecoded-and-undefined when its percent-encoding is broken.
  if (where === "params") return "is not valid percent-encoded UTF-8";
  if (code === "required") return "is required";
  if (/union value/i.test(message)) return "is not one of the accepted values";
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
