import { preflight, type CorsPolicy } from "../cors";
import type { Step } from "../exchange";

/** A CORS preflight is answered before any other check: the browser sends it without credentials. */
export function answerPreflight(cors: CorsPolicy): Step {
  return (x, next) => (x.request.method === "OPTIONS" && cors.covers(x.path) ? Promise.resolve(preflight(cors, x.request)) : next(x));
}
