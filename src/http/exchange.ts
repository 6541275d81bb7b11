import type { IdempotentWrite } from "../deps";
import type { Principal } from "../principal";
import { AppError, errorResponse } from "./errors";
import type { FastMatch } from "./fast-route";

/**
 * A request on its way through the boundary's steps (boundary.ts): what they learned of it. The
 * router gets it too, carried by the request (request-state.ts), for `ctx` and the answer's headers.
 */
export interface Exchange {
  /** The request as the steps left it (forwarded origin, padded Host, capped body). */
  request: Request;
  readonly path: string;
  readonly id: string;
  /** Under /api/v1: answered by token, with the rate-limit headers. */
  readonly api: boolean;
  readonly started: number;
  /** The route answered without the router (the append), when one matches. */
  readonly fast: FastMatch | null;
  /** The client's address, looked up on first use (a system call most requests never need). */
  ip(): string;
  principal?: Principal;
  /** Headers of the answer, set by the app as it builds it (request id, rate limits). */
  headers: Record<string, string>;
  /** The body as text, when a step read and checked it. */
  text: string | null;
  idempotency?: IdempotentWrite;
}

/** What runs the rest of the list for an exchange (the steps after one, then the route). */
export type Next = (x: Exchange) => Promise<Response>;

/**
 * One step: answers itself, or passes the exchange on to `next` (and may change its answer). A
 * step that only checks is a plain function returning `next(x)` itself, not an `async` one: every
 * async frame is resumed once more when the answer comes back, on every request. It may throw;
 * the first step of every list (answer.ts) turns that into the error envelope.
 */
export type Step = (x: Exchange, next: Next) => Promise<Response>;

/** The steps in order, then `last` (the route), as one function, made once: no closure per request. */
export function chain(steps: readonly Step[], last: Next): Next {
  return steps.reduceRight<Next>((next, step) => (x) => step(x, next), last);
}

export function toResponse(e: unknown): Response {
  if (e instanceof AppError) return errorResponse(e);
  console.error(JSON.stringify({ level: "error", msg: "unhandled error at the boundary", error: String((e as Error)?.stack ?? e) }));
  return errorResponse(new AppError("internal_error", "something went wrong on our side; the request id identifies it in the log"));
}

export function withHeaders(response: Response, headers: Record<string, string>): Response {
  for (const [k, v] of Object.entries(headers)) response.headers.set(k, v);
  return response;
}
