import { checkBodyText, limitBody } from "../body-limit";
import type { Step } from "../exchange";

/**
 * The body's cap (from Content-Length, or while a chunked one is read), then UTF-8 and JSON depth
 * (body-limit.ts). The fast route reads its body itself, unless an Idempotency-Key needs it first.
 */
export function body(cap: number, check?: { depth?: boolean; anyType?: boolean }): Step {
  return async (x, next) => {
    x.request = await limitBody(x.request, cap);
    if (!x.fast || x.request.headers.get("idempotency-key") !== null) x.text = await checkBodyText(x.request, check);
    return next();
  };
}
