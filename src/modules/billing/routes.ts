import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { AppError } from "../../http/errors";
import { applyBillingEvent, verifyBillingSignature } from "./service";

/** POST /webhooks/lemonsqueezy: the signature is checked on the raw bytes before any parsing. */
export const billingRoutes = (deps: Deps) =>
  new Elysia().post(
    "/webhooks/lemonsqueezy",
    async ({ request }) => {
      const raw = new Uint8Array(await request.arrayBuffer());
      verifyBillingSignature(deps, raw, request.headers.get("x-signature"));
      let event;
      try {
        event = JSON.parse(new TextDecoder().decode(raw));
      } catch {
        throw new AppError("bad_request", "the billing event is not valid JSON");
      }
      if (event === null || typeof event !== "object" || Array.isArray(event)) throw new AppError("bad_request", "the billing event must be a JSON object");
      const outcome = await deps.writer.write(() => applyBillingEvent(deps, raw, event));
      // Acknowledged so the store stops retrying, but a paid subscription that changed nothing
      // (an unconfigured variant, a checkout not started here) needs an operator's eye.
      if (!outcome.applied && !outcome.replay) {
        console.log(JSON.stringify({ time: new Date().toISOString(), level: "warn", msg: "billing event changed nothing", event: outcome.event, reason: outcome.reason }));
      }
      return outcome;
    },
    { parse: "none", detail: { hide: true } },
  );
