import { Elysia, ValidationError } from "elysia";
import { AppError, type FieldProblem } from "../errors";

/** Turns TypeBox validation errors into validation_failed details: field, code, message. */
export function validationProblems(error: ValidationError): FieldProblem[] {
  const seen = new Set<string>();
  const problems: FieldProblem[] = [];
  for (const e of error.all) {
    const path = "path" in e && typeof e.path === "string" ? e.path : "";
    const field = path.replace(/^\//, "").replace(/\//g, ".") || (error.type === "body" ? "body" : error.type);
    if (seen.has(field)) continue;
    seen.add(field);
    const message = "message" in e && typeof e.message === "string" ? e.message : "is invalid";
    const code = /required property/i.test(message)
      ? "required"
      : /length less/i.test(message)
        ? "too_long"
        : /Expected (string|number|integer|boolean|object|array|union)/i.test(message)
          ? "invalid_type"
          : "invalid";
    problems.push({ field, code, message: message.replace(/^Expected/, "expected") });
  }
  return problems;
}

/** The one place an error becomes a response: the envelope of API.md, never a stack trace. */
export const errorHandler = () => new Elysia().onError({ as: "global" }, ({ code, error, set }) => {
  let app: AppError;
  // A parser hook's own AppError reaches here wrapped in Elysia's ParseError.
  const cause = (error as Error | undefined)?.cause;
  if (error instanceof AppError) {
    app = error;
  } else if (cause instanceof AppError) {
    app = cause;
  } else if (code === "VALIDATION") {
    const problems = validationProblems(error as ValidationError);
    app = new AppError("validation_failed", problems.map((p) => `${p.field}: ${p.message}`).join("; ") || "invalid request", problems);
  } else if (code === "PARSE") {
    app = new AppError("bad_request", "the request body could not be parsed; send JSON with Content-Type: application/json");
  } else if (code === "NOT_FOUND") {
    app = new AppError("not_found", "no such endpoint");
  } else {
    console.error(JSON.stringify({ level: "error", msg: "unhandled error", error: String((error as Error)?.stack ?? error) }));
    app = new AppError("internal_error", "something went wrong on our side; the request id identifies it in the log");
  }
  set.status = app.status;
  Object.assign(set.headers, { "content-type": "application/json; charset=utf-8" }, app.headers);
  return app.toBody();
});
