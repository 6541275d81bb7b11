import type { Deps } from "../deps";

const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** What the outermost trusted proxy wrote in a `Forwarded` element (RFC 7239), each if it said. */
interface Element {
  proto?: string;
  host?: string;
  for?: string;
}

/*
 * Each header family is read only where NOTESTREAM_TRUST_PROXY_HEADERS names it: a proxy that
 * writes X-Forwarded-* passes a client's own `Forwarded` through untouched (and the reverse), so
 * reading the other family would let the client choose. With N proxies the value is the Nth from
 * the end, the one the outermost trusted proxy wrote; anything a client wrote before it is ignored.
 */

function forwardedElement(request: Request, hops: number): Element {
  const element = (request.headers.get("forwarded") ?? "").split(",").at(-hops);
  const found: Element = {};
  for (const pair of element?.split(";") ?? []) {
    const at = pair.indexOf("=");
    if (at < 0) continue;
    const key = pair.slice(0, at).trim().toLowerCase();
    const value = pair.slice(at + 1).trim().replace(/^"(.*)"$/, "$1");
    if (key === "proto" || key === "host" || key === "for") found[key] = value;
  }
  return found;
}

/** `skipEmpty` for X-Forwarded-For, whose proxies append to what came (an empty entry is no hop). */
function xForwarded(request: Request, name: string, hops: number, skipEmpty = false): string | undefined {
  const values = (request.headers.get(name) ?? "").split(",").map((s) => s.trim());
  return (skipEmpty ? values.filter(Boolean) : values).at(-hops) || undefined;
}

/**
 * The origin the client used, as the trusted proxies in front recorded it, when
 * NOTESTREAM_TRUST_PROXY says there are such proxies and NOTESTREAM_BASE_URL does not already say
 * it. Null when nothing (valid) was forwarded.
 */
export function forwardedOrigin(deps: Deps, request: Request): string | null {
  if (deps.config.trustProxy === 0 || deps.config.baseUrl) return null;
  const hops = deps.config.trustProxy;
  const { proto, host } =
    deps.config.trustProxyHeaders === "forwarded"
      ? forwardedElement(request, hops)
      : { proto: xForwarded(request, "x-forwarded-proto", hops), host: xForwarded(request, "x-forwarded-host", hops) };
  if (!proto && !host) return null;
  const own = new URL(request.url);
  const scheme = proto?.toLowerCase();
  const authority = host && HOST.test(host) ? host : own.host;
  return `${scheme === "https" || scheme === "http" ? scheme : own.protocol.slice(0, -1)}://${authority}`;
}

/**
 * The client's address as the outermost trusted proxy recorded it (`X-Forwarded-For`, or
 * `Forwarded: for=`, an IPv6 address in brackets and a port taken off), or undefined when
 * NOTESTREAM_TRUST_PROXY is off or the proxy recorded none.
 */
export function forwardedFor(deps: Deps, request: Request): string | undefined {
  const hops = deps.config.trustProxy;
  if (hops === 0) return undefined;
  if (deps.config.trustProxyHeaders === "x-forwarded") return xForwarded(request, "x-forwarded-for", hops, true);
  const value = forwardedElement(request, hops).for;
  if (!value) return undefined;
  const v6 = /^\[([^\]]+)\]/.exec(value);
  if (v6) return v6[1];
  return /^[\d.]+:\d+$/.test(value) ? value.slice(0, value.indexOf(":")) : value;
}

/** The request as the client addressed it: every `new URL(request.url).origin` downstream sees the public origin. */
export function asForwarded(deps: Deps, request: Request): Request {
  const origin = forwardedOrigin(deps, request);
  if (origin === null) return request;
  const url = new URL(request.url);
  if (url.origin === origin) return request;
  return new Request(origin + url.pathname + url.search, request);
}
