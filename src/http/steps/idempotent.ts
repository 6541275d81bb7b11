import type { Deps } from "../../deps";
import type { Principal } from "../../principal";
import type { Step } from "../exchange";
import { idempotency } from "../idempotency";

/** An Idempotency-Key replays its stored answer, or runs the rest once and stores its answer with its write. */
export function idempotent(deps: Deps, assertReplayable: (principal: Principal) => Promise<void>): Step {
  const once = idempotency(deps, assertReplayable);
  return (x, next) =>
    x.request.headers.get("idempotency-key") === null
      ? next(x)
      : once(x.request, x.principal, x.path, x.text, (write) => {
          x.idempotency = write;
          return next(x);
        });
}
