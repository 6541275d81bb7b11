import type { Exchange } from "./exchange";

/** What the boundary learned about a request, handed to the Elysia app (see plugins/auth.ts). */
export type RequestState = Pick<Exchange, "principal" | "idempotency" | "headers" | "ip">;

// Elysia's handle() takes a Request and nothing else, so the request carries it, under a key no
// header or client can name.
const STATE = Symbol("boundary");
type Carrying = Request & { [STATE]?: RequestState };

export function setRequestState(request: Request, state: RequestState): void {
  (request as Carrying)[STATE] = state;
}

export function requestState(request: Request): RequestState | undefined {
  return (request as Carrying)[STATE];
}
