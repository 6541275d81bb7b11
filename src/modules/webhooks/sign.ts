import { createHmac } from "node:crypto";

export const SECRET_PREFIX = "whsec_";

export function newWebhookSecret(): string {
  return SECRET_PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
}

/**
 * Our own scheme (`X-Service-Signature: t=…,v1=<hex HMAC-SHA256 of "t.body">`) and the Standard
 * Webhooks headers (`webhook-signature: v1,<base64 HMAC-SHA256 of "id.t.body">`), both keyed by
 * the decoded secret, so either kind of verifier accepts the delivery.
 */
export function signatureHeaders(secret: string, deliveryId: string, body: string, unixSeconds: number): Record<string, string> {
  const key = keyOf(secret);
  const ours = createHmac("sha256", key).update(`${unixSeconds}.${body}`).digest("hex");
  const standard = createHmac("sha256", key).update(`${deliveryId}.${unixSeconds}.${body}`).digest("base64");
  return {
    "x-service-signature": `t=${unixSeconds},v1=${ours}`,
    "x-service-delivery": deliveryId,
    "webhook-id": deliveryId,
    "webhook-timestamp": String(unixSeconds),
    "webhook-signature": `v1,${standard}`,
  };
}
