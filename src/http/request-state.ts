import type { IdempotentWrite } from "../deps";
import type { Principal } from "../principal";

/** What the boundary learned about a request, handed to the Elysia app (see plugins/auth.ts). */
export interface RequestState {
  principal?: Principal;
  idempotency?: IdempotentWrite;
  /** Headers for the answer (request id, rate limits), set by the app as it builds it: cheaper than adding them after. */
  headers: Record<string, string>;
  /** The client's address (see NOTESTREAM_TRUST_PROXY), for per-address limits in the app. */
  ip?: string;
}

// Keyed by the Request object itself: nothing to clean up, and no header a client could forge.
const states = new WeakMap<Request, RequestState>();

export function setRequestState(request: Request, state: RequestState): void {
  states.set(request, state);
}

export function requestState(request: Request): RequestState | undefined {
  return states.get(request);
}
