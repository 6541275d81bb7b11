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

/** One step: answers itself, or passes the exchange on to `next` (and may change its answer). */
export type Step = (x: Exchange, next: () => Promise<Response>) => Promise<Response>;

/** Runs the steps in order, then `last` (the router). */
export function runSteps(steps: readonly Step[], x: Exchange, last: (x: Exchange) => Promise<Response>, i = 0): Promise<Response> {
  const step = steps[i];
  return step ? step(x, () => runSteps(steps, x, last, i + 1)) : last(x);
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
