import { checkBodyText, limitBody } from "../body-limit";
import type { Exchange, Next, Step } from "../exchange";

/**
 * The body's cap (from Content-Length, or while a chunked one is read), then UTF-8 and JSON depth
 * (body-limit.ts). The fast route reads its body itself, unless an Idempotency-Key needs it first.
 */
export function body(cap: number, check?: { depth?: boolean; anyType?: boolean }): Step {
  const read = async (x: Exchange, limited: Request | Promise<Request>, next: Next): Promise<Response> => {
    x.request = await limited;
    if (!x.fast || x.request.headers.get("idempotency-key") !== null) x.text = await checkBodyText(x.request, check);
    return next(x);
  };
  // A body within its cap by Content-Length that the route reads itself (an append) waits for nothing here.
  return (x, next) => {
    const limited = limitBody(x.request, cap);
    if (limited instanceof Promise || !x.fast || limited.headers.get("idempotency-key") !== null) return read(x, limited, next);
    x.request = limited;
    return next(x);
  };
}
