import type { Deps } from "../../deps";
import { addCors, type CorsPolicy } from "../cors";
import { toResponse, withHeaders, type Step } from "../exchange";
import { logRequest } from "../log";
import { secureResponse } from "../security-headers";

/** `route` is the fast route's pattern when one answered, else null (the router's, or none). */
export type AnswerObserver = (method: string, path: string, route: string | null, status: number, started: number) => void;

/**
 * The first step, so the last word on every answer: anything thrown becomes the error envelope;
 * outside the API the answer gets the request id, CORS and the security headers; then the log
 * line and the observer (metrics).
 */
export function answer(deps: Deps, cors: CorsPolicy, observe?: AnswerObserver): Step {
  const hsts = deps.config.baseUrl?.startsWith("https://") ?? false;
  return async (x, next) => {
    let response: Response;
    try {
      response = await next(x);
    } catch (e) {
      response = x.api ? withHeaders(toResponse(e), { "x-request-id": x.id }) : toResponse(e);
    }
    const { request, path } = x;
    if (!x.api) {
      if (!response.headers.has("x-request-id")) response.headers.set("x-request-id", x.id);
      if (cors.covers(path)) addCors(cors, request, response);
      secureResponse(response, hsts, request.url.startsWith("https:"));
    }
    // The address costs a system call where nothing asked for it yet: only for the log line.
    if (deps.config.logRequests) logRequest(request.method, path, response.status, x.started, x.id, x.ip());
    if (observe) observe(request.method, path, x.fast && x.fast.route.routeOf(path), response.status, x.started);
    return response;
  };
}
