import type { Deps } from "../../deps";
import { formatIp, ipFamily, isPublicAddress, parseIp, type Ip } from "../../lib/ip";
import { CONNECT_TIMEOUT_MS, postTo, type PostResult } from "./http";

export class RefusedTarget extends Error {}

export const MAX_URL_LENGTH = 2048;

/**
 * Why a webhook URL is refused when it is set, as data: the API words it (`urlProblem`), the
 * pages word it for people (wording.ts). Names are checked when delivering.
 */
export type UrlProblem =
  | { kind: "too_long" | "not_url" | "not_http" | "credentials" }
  /** `range` is ipaddr.js's name for where the address lies: loopback, private, linkLocal, … */
  | { kind: "not_public"; host: string; range: string };

export function checkWebhookUrl(deps: Deps, raw: string): UrlProblem | null {
  if (raw.length > MAX_URL_LENGTH) return { kind: "too_long" };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { kind: "not_url" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { kind: "not_http" };
  if (url.username || url.password) return { kind: "credentials" };
  // The URL parser already turned decimal, octal and hex IPv4 spellings into dotted form, and
  // IPv6 into compressed hex (`[::127.0.0.1]` is `[::7f00:1]`): the check sees what is connected to.
  const ip = parseIp(url.hostname);
  if (ip && !isPublicAddress(ip, deps.config.webhookAllow)) return { kind: "not_public", host: url.hostname, range: ip.range() };
  return null;
}

/** The API's words for a refused URL (after "webhook_url "), or null. */
export function urlProblem(deps: Deps, raw: string): string | null {
  const p = checkWebhookUrl(deps, raw);
  if (!p) return null;
  switch (p.kind) {
    case "too_long":
      return `must be at most ${MAX_URL_LENGTH} characters`;
    case "not_url":
      return "must be an absolute http or https URL";
    case "not_http":
      return "must be an http or https URL";
    case "credentials":
      return "must not carry a user name or password";
    case "not_public":
      return `points at ${p.host}, which is not a public address (loopback, private, link-local, metadata and similar are refused)`;
  }
}

/**
 * The address to connect to: the literal, or every address the name resolves to, each checked.
 * The delivery then connects to this very address, so a second lookup cannot swap it. A refusal
 * never names a resolved address: it lands in a log the note's users read, and would map the
 * server's private network for them one name at a time.
 */
export async function checkedAddress(deps: Deps, url: URL): Promise<{ address: string; family: 4 | 6 }> {
  const host = url.hostname;
  const literal = parseIp(host);
  const candidates: Ip[] = literal
    ? [literal]
    : (await deps.resolve(host)).map((a) => parseIp(a.address)).filter((a): a is Ip => a !== null);
  if (candidates.length === 0) throw new RefusedTarget(`${host} did not resolve`);
  if (candidates.some((ip) => !isPublicAddress(ip, deps.config.webhookAllow))) {
    throw new RefusedTarget(literal ? `${host} is not a public address` : `${host} resolves to a non-public address`);
  }
  const ip = candidates[0]!;
  return { address: formatIp(ip), family: ipFamily(ip) };
}

/**
 * A delivery's request through the address guard, within the configured timeout: what the target
 * answered, or the refusal (a private address, a name that does not resolve, a bad URL) as a
 * result like any failed attempt. Webhooks and channels send this way.
 */
export async function guardedPost(deps: Deps, url: string | URL, body: string, headers: Record<string, string>, method: "POST" | "PUT" = "POST"): Promise<PostResult> {
  try {
    const u = typeof url === "string" ? new URL(url) : url;
    const total = deps.config.webhookTimeoutMs;
    return await postTo(u, await checkedAddress(deps, u), body, headers, { connect: Math.min(CONNECT_TIMEOUT_MS, total), total }, method);
  } catch (e) {
    if (!(e instanceof Error)) throw e;
    return { status: null, headers: {}, body: "", error: `target refused: ${e.message}`, durationMs: 0 };
  }
}

/** Whether an attempt succeeded: a 2xx answer. */
export const succeeded = (r: PostResult): boolean => r.status !== null && r.status >= 200 && r.status < 300;
