import type { Deps } from "../deps";

const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The origin the client used, as the trusted proxies in front recorded it (`Forwarded:
 * proto=…;host=…`, or `X-Forwarded-Proto` and `X-Forwarded-Host`), when NOTESTREAM_TRUST_PROXY
 * says there are such proxies and NOTESTREAM_BASE_URL does not already say it. With N proxies the
 * Nth value from the end is the one the outermost trusted proxy wrote; anything a client wrote
 * before it is ignored. Null when nothing (valid) was forwarded.
 */
export function forwardedOrigin(deps: Deps, request: Request): string | null {
  const hops = deps.config.trustProxy;
  if (hops === 0 || deps.config.baseUrl) return null;
  let proto: string | undefined;
  let host: string | undefined;
  const forwarded = request.headers.get("forwarded");
  if (forwarded) {
    const element = forwarded.split(",").map((e) => e.trim()).at(-hops);
    for (const pair of element?.split(";") ?? []) {
      const [k, v] = pair.split("=").map((s) => s.trim());
      const value = v?.replace(/^"(.*)"$/, "$1");
      if (k?.toLowerCase() === "proto") proto = value?.toLowerCase();
      if (k?.toLowerCase() === "host") host = value;
    }
  } else {
    proto = request.headers.get("x-forwarded-proto")?.split(",").map((s) => s.trim().toLowerCase()).at(-hops);
    host = request.headers.get("x-forwarded-host")?.split(",").map((s) => s.trim()).at(-hops);
  }
  if (!proto && !host) return null;
  const own = new URL(request.url);
  const scheme = proto === "https" || proto === "http" ? proto : own.protocol.slice(0, -1);
  const authority = host && HOST.test(host) ? host : own.host;
  return `${scheme}://${authority}`;
}

/** The request as the client addressed it: every `new URL(request.url).origin` downstream sees the public origin. */
export function asForwarded(deps: Deps, request: Request): Request {
  const origin = forwardedOrigin(deps, request);
  if (origin === null) return request;
  const url = new URL(request.url);
  if (url.origin === origin) return request;
  return new Request(origin + url.pathname + url.search, request);
}
