import type { Principal } from "../../principal";
import { toResponse, withHeaders, type Step } from "../exchange";

/** A 4xx answered to a token, for its error log (GET /api/v1/errors). */
export type ClientErrorLog = (e: { principal: Principal; method: string; path: string; status: number; code: string }) => void | Promise<void>;

/**
 * Every /api/v1 answer, refusals included, carries the request id and the rate-limit headers (the
 * app puts them on its answers as it builds them); a 4xx answered to a token goes to its error log.
 */
export function apiAnswer(onClientError: ClientErrorLog): Step {
  return async (x, next) => {
    let response: Response;
    try {
      response = await next(x);
      // The fast route's reply and the app's answers are made with them; an answer of the app's error handler may not be.
      if (!x.fast && !response.headers.has("x-ratelimit-limit")) withHeaders(response, x.headers);
    } catch (e) {
      response = withHeaders(toResponse(e), x.headers);
    }
    const principal = x.principal;
    if (principal && response.status >= 400 && response.status < 500) void recordError(onClientError, principal, x.request.method, x.path, response);
    return response;
  };
}

async function recordError(log: ClientErrorLog, principal: Principal, method: string, path: string, response: Response): Promise<void> {
  let code = "unknown";
  try {
    code = ((await response.clone().json()) as { error?: { code?: string } }).error?.code ?? code;
  } catch {}
  await log({ principal, method, path, status: response.status, code });
}
