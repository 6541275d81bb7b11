import { createHash, timingSafeEqual } from "node:crypto";
import { randomBase62 } from "./random";

export const TOKEN_PREFIX = "nst_";
const TOKEN_RANDOM_LENGTH = 40; // 40 base62 characters ≈ 238 bits

export function newApiToken(): string {
  return TOKEN_PREFIX + randomBase62(TOKEN_RANDOM_LENGTH);
}

export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

/** Constant-time comparison of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, "hex");
  const bb = Buffer.from(b, "hex");
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
