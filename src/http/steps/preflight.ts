import { preflight, type CorsPolicy } from "../cors";
import type { Step } from "../exchange";

/** A CORS preflight is answered before any other check: the browser sends it without credentials. */
export function answerPreflight(cors: CorsPolicy): Step {
  return async (x, next) => (x.request.method === "OPTIONS" && cors.covers(x.path) ? preflight(cors, x.request) : next());
}
