/**
 * A loopback stand-in for Lemon Squeezy: its API (JSON:API checkouts and subscriptions, with the
 * key checked) records every request and answers as the provider does, and its checkout and
 * customer-portal pages are plain pages a browser can land on. `failNext` makes the API answer
 * an error status, or not answer at all, to test what a person sees then.
 */
import { createHmac } from "node:crypto";

export const LS_KEY = "ls_test_key_0123456789";
export const LS_STORE = "4242";
export const LS_SECRET = "whsec_standin";
export const LS_VARIANTS = { personal: 111, dev: 222, team: 333 } as const;

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: any;
  /** The JSON the stand-in answered with, when it answered JSON:API. */
  answer?: any;
}

export interface ProviderStandIn {
  /** The API's base URL, for NOTESTREAM_LEMONSQUEEZY_API_URL. */
  api: string;
  origin: string;
  requests: RecordedRequest[];
  failNext(answer: { status: number; body?: string } | "hang" | "no-link"): void;
  stop(): void;
}

const page = (title: string) => new Response(`<!doctype html><title>${title}</title><h1>${title}</h1>`, { headers: { "content-type": "text/html; charset=utf-8" } });

export function providerStandIn(): ProviderStandIn {
  const requests: RecordedRequest[] = [];
  let fail: { status: number; body?: string } | "hang" | "no-link" | null = null;
  let checkouts = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      if (url.pathname.startsWith("/checkout/")) return page("Stand-in checkout");
      if (url.pathname === "/billing") return page("Stand-in customer portal");
      // What a browser asks of the store's pages besides them (a favicon) is no API call.
      if (!url.pathname.startsWith("/v1/")) return new Response("not found", { status: 404 });
      const text = await request.text();
      const recorded: RecordedRequest = { method: request.method, path: url.pathname, headers: Object.fromEntries(request.headers), body: text ? JSON.parse(text) : null };
      requests.push(recorded);
      const jsonApi = (status: number, body: unknown) => {
        recorded.answer = body;
        return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/vnd.api+json" } });
      };
      const answer = fail;
      fail = null;
      if (answer === "hang") return new Promise<Response>(() => {});
      if (answer && answer !== "no-link") return new Response(answer.body ?? "", { status: answer.status });
      if (request.headers.get("authorization") !== `Bearer ${LS_KEY}`) return jsonApi(401, { errors: [{ status: "401", title: "Unauthorized", detail: "Unauthenticated." }] });
      if (request.method === "POST" && url.pathname === "/v1/checkouts") {
        const id = `0000-checkout-${++checkouts}`;
        const attributes = JSON.parse(text).data.attributes;
        return jsonApi(201, {
          jsonapi: { version: "1.0" },
          data: {
            type: "checkouts",
            id,
            attributes: { ...attributes, url: answer === "no-link" ? null : `http://${url.host}/checkout/custom/${id}?signature=s${checkouts}`, test_mode: true },
          },
        });
      }
      const sub = /^\/v1\/subscriptions\/(\d+)$/.exec(url.pathname);
      if (request.method === "GET" && sub) {
        return jsonApi(200, {
          jsonapi: { version: "1.0" },
          data: {
            type: "subscriptions",
            id: sub[1],
            attributes: {
              status: "active",
              urls: {
                update_payment_method: `http://${url.host}/billing?update=${sub[1]}`,
                customer_portal: answer === "no-link" ? "javascript:alert(1)" : `http://${url.host}/billing?subscription=${sub[1]}&signature=p`,
              },
            },
          },
        });
      }
      return jsonApi(404, { errors: [{ status: "404", title: "Not Found" }] });
    },
  });
  const origin = `http://127.0.0.1:${server.port}`;
  return {
    api: `${origin}/v1`,
    origin,
    requests,
    failNext: (a) => void (fail = a),
    stop: () => server.stop(true),
  };
}

/** The service's billing configuration against the stand-in. */
export function billingEnv(s: ProviderStandIn): Record<string, string> {
  return {
    NOTESTREAM_BILLING_SECRET: LS_SECRET,
    NOTESTREAM_LEMONSQUEEZY_API_KEY: LS_KEY,
    NOTESTREAM_LEMONSQUEEZY_STORE_ID: LS_STORE,
    NOTESTREAM_LEMONSQUEEZY_VARIANTS: `personal:${LS_VARIANTS.personal},dev:${LS_VARIANTS.dev},team:${LS_VARIANTS.team}`,
    NOTESTREAM_LEMONSQUEEZY_API_URL: s.api,
  };
}

/**
 * The subscription_created Lemon Squeezy sends for a checkout: the checkout's custom data comes
 * back in meta.custom_data, its variant in the attributes. Returned as the exact body and its
 * X-Signature, as the existing billing tests sign it.
 */
export function subscriptionCreated(checkout: RecordedRequest, subscriptionId: string): { body: string; signature: string } {
  const a = checkout.body.data.attributes;
  const body = JSON.stringify({
    meta: { event_name: "subscription_created", custom_data: a.checkout_data.custom },
    data: {
      type: "subscriptions",
      id: subscriptionId,
      attributes: {
        store_id: Number(checkout.body.data.relationships.store.data.id),
        customer_id: 777,
        variant_id: Number(checkout.body.data.relationships.variant.data.id),
        status: "active",
        user_email: a.checkout_data.email,
        updated_at: new Date().toISOString(),
      },
    },
  });
  return { body, signature: createHmac("sha256", LS_SECRET).update(body).digest("hex") };
}
