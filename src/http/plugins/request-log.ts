import { Elysia } from "elysia";
import { randomBase62 } from "../../lib/random";

const started = new WeakMap<Request, { id: string; t: number }>();

/**
 * An X-Request-Id on every answer, and one JSON line per request on stdout: method, path,
 * status, duration, request id. Never a header value, a query string or a body, which may hold secrets.
 */
export function requestLog(enabled: boolean) {
  return new Elysia()
    .onRequest(({ request, set }) => {
      const incoming = request.headers.get("x-request-id");
      const id = incoming && /^[\w.-]{1,64}$/.test(incoming) ? incoming : `req_${randomBase62(16)}`;
      started.set(request, { id, t: performance.now() });
      set.headers["x-request-id"] = id;
    })
    .onAfterResponse({ as: "global" }, ({ request, set, path }) => {
      if (!enabled) return;
      const s = started.get(request);
      const line = {
        time: new Date().toISOString(),
        level: "info",
        msg: "request",
        method: request.method,
        path,
        status: typeof set.status === "number" ? set.status : 200,
        duration_ms: s ? Math.round((performance.now() - s.t) * 100) / 100 : null,
        request_id: s?.id,
      };
      console.log(JSON.stringify(line));
    });
}
