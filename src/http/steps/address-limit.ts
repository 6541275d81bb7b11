import type { Deps } from "../../deps";
import { AppError } from "../errors";
import { toResponse, withHeaders, type Step } from "../exchange";
import { rateHeaders } from "../rate-limit";

/** A per-address limit outside the API (the billing webhook, the deep health check), its headers on the answer. */
export function addressLimit(deps: Deps, name: string, perMinute: number): Step {
  return async (x, next) => {
    const d = await deps.limiter.consume(`${name}:${x.ip()}`, perMinute, "anonymous");
    const headers = rateHeaders(d, deps.clock.now());
    if (!d.allowed) return withHeaders(toResponse(new AppError("rate_limited", `rate limit of ${perMinute} per minute from this address reached`)), headers);
    return withHeaders(await next(x), headers);
  };
}
