/** The closed list of error codes of API.md, and the status each one answers with. */
export const codeToStatus = {
  bad_request: 400,
  unauthorized: 401,
  insufficient_scope: 403,
  account_read_only: 403,
  plan_required: 403,
  cap_exceeded: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  idempotency_in_progress: 409,
  payload_too_large: 413,
  validation_failed: 422,
  idempotency_key_reused: 422,
  note_locked: 423,
  rate_limited: 429,
  internal_error: 500,
  storage_full: 507,
} as const;

export type ErrorCode = keyof typeof codeToStatus;

export interface FieldProblem {
  field: string;
  code: string;
  message: string;
  index?: number;
}

export type CapName = "notes" | "storage" | "note_size" | "folders" | "tokens" | "channels" | "digests";

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.status = codeToStatus[code];
  }

  toBody() {
    return { error: { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) } };
  }
}

export class NotFound extends AppError {
  constructor(what: string) {
    super("not_found", `${what} not found`);
  }
}

export class ValidationFailed extends AppError {
  constructor(problems: FieldProblem[]) {
    super("validation_failed", problems.map((p) => `${p.field}: ${p.message}`).join("; "), problems);
  }
  static field(field: string, code: string, message: string): ValidationFailed {
    return new ValidationFailed([{ field, code, message }]);
  }
}

export class CapExceeded extends AppError {
  constructor(cap: CapName, limit: number, used: number, message: string) {
    super("cap_exceeded", message, { cap, limit, used });
  }
}

export class InsufficientScope extends AppError {
  constructor(message: string) {
    super("insufficient_scope", message);
  }
}

export class NoteLocked extends AppError {
  constructor(message: string) {
    super("note_locked", message);
  }
}

export class Conflict extends AppError {
  constructor(message: string) {
    super("conflict", message);
  }
}

/** The disk (or PostgreSQL's) is full: nothing of the write was stored; Retry-After says when to try again. */
export class StorageFull extends AppError {
  constructor(message: string, retryAfterSeconds: number) {
    super("storage_full", message, undefined, { "retry-after": String(retryAfterSeconds) });
  }
}

export function errorResponse(err: AppError, extraHeaders?: Record<string, string>): Response {
  return new Response(JSON.stringify(err.toBody()), {
    status: err.status,
    headers: { "content-type": "application/json; charset=utf-8", ...err.headers, ...extraHeaders },
  });
}

/** 401 with the WWW-Authenticate challenge RFC 6750 asks for. */
export const unauthorized = (message: string) =>
  new AppError("unauthorized", message, undefined, { "www-authenticate": 'Bearer realm="notestream"' });
