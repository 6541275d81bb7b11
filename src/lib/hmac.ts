import { createHmac, timingSafeEqual } from "node:crypto";

export function hmacSha256Hex(key: string | Uint8Array, data: string | Uint8Array): string {
  return createHmac("sha256", key).update(data).digest("hex");
}

/** Constant-time check of a hex signature against the expected one. */
export function signatureMatches(expectedHex: string, given: string | null | undefined): boolean {
  if (!given || !/^[0-9a-f]+$/i.test(given.trim())) return false;
  const a = Buffer.from(expectedHex, "hex");
  const b = Buffer.from(given.trim().toLowerCase(), "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}
