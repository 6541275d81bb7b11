import type { Deps } from "../../deps";
import type { Exchange } from "../exchange";
import type { Reply } from "../reply";
import { setRequestState } from "../request-state";

/**
 * The last step: the fast route's handler (the append, without the router), or the router, which
 * finds what the steps learned on the request (request-state.ts).
 */
export function route(deps: Deps, app: { handle: (request: Request) => Response | Promise<Response> }): (x: Exchange) => Promise<Response> {
  const routed = async (x: Exchange): Promise<Response> => {
    setRequestState(x.request, x);
    return app.handle(x.request);
  };
  return (x) => {
    const { fast, principal } = x;
    if (fast && principal) return fast.handler({ deps, principal, idempotency: x.idempotency }, x.request).then((reply) => replyResponse(reply, x.headers));
    return routed(x);
  };
}

/** A write's reply as an answer, with the headers of every /api/v1 answer. */
function replyResponse(reply: Reply<unknown>, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(reply.body), { status: reply.status, headers: { ...headers, "content-type": "application/json" } });
}
