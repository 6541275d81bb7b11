/** What a trusted proxy forwarded, read from the one header family NOTESTREAM_TRUST_PROXY_HEADERS names. */
import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config";
import type { Deps } from "../../src/deps";
import { forwardedFor, forwardedOrigin } from "../../src/http/forwarded";
import { clientIp } from "../../src/http/identify";

const depsWith = (env: Record<string, string>) => ({ config: loadConfig({ NOTESTREAM_TRUST_PROXY: "1", ...env }) }) as unknown as Deps;
const at = (headers: Record<string, string>) => new Request("http://127.0.0.1:8080/api/v1/notes", { headers });

/** Both families at once, as a proxy of either kind passes the other one on from the client. */
const BOTH = {
  forwarded: 'for="[2001:db8::7]:4711";proto=https;host=rfc.example.com',
  "x-forwarded-for": "198.51.100.7",
  "x-forwarded-proto": "https",
  "x-forwarded-host": "x.example.com",
};

describe("x-forwarded (the default: nginx, Caddy, Traefik)", () => {
  const deps = depsWith({});

  test("the origin and the address come from X-Forwarded-*, and a client's Forwarded is ignored", () => {
    expect(forwardedOrigin(deps, at(BOTH))).toBe("https://x.example.com");
    expect(forwardedFor(deps, at(BOTH))).toBe("198.51.100.7");
    expect(clientIp(deps, at(BOTH), "127.0.0.1")).toBe("198.51.100.7");
  });

  test("a Forwarded header alone forwards nothing: the request's own origin and the peer stand", () => {
    const alone = at({ forwarded: "for=203.0.113.5;host=evil.test;proto=https" });
    expect(forwardedOrigin(deps, alone)).toBeNull();
    expect(clientIp(deps, alone, "127.0.0.1")).toBe("127.0.0.1");
  });

  test("with two proxies, the value the outer one wrote wins over what the client sent first", () => {
    const two = depsWith({ NOTESTREAM_TRUST_PROXY: "2" });
    const headers = { "x-forwarded-host": "evil.test, notes.example.com, inner.local", "x-forwarded-proto": "http, https, http", "x-forwarded-for": "6.6.6.6, 198.51.100.7, 10.0.0.2" };
    expect(forwardedOrigin(two, at(headers))).toBe("https://notes.example.com");
    expect(forwardedFor(two, at(headers))).toBe("198.51.100.7");
  });
});

describe("forwarded (RFC 7239)", () => {
  const deps = depsWith({ NOTESTREAM_TRUST_PROXY_HEADERS: "forwarded" });

  test("the origin and the address come from Forwarded, and a client's X-Forwarded-* are ignored", () => {
    expect(forwardedOrigin(deps, at(BOTH))).toBe("https://rfc.example.com");
    expect(forwardedFor(deps, at(BOTH))).toBe("2001:db8::7");
    expect(clientIp(deps, at(BOTH), "127.0.0.1")).toBe("2001:db8::7");
  });

  test("X-Forwarded-* alone forward nothing", () => {
    const alone = at({ "x-forwarded-host": "evil.test", "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.5" });
    expect(forwardedOrigin(deps, alone)).toBeNull();
    expect(clientIp(deps, alone, "127.0.0.1")).toBe("127.0.0.1");
  });

  test("the last element is the trusted proxy's; quoted values, an IPv4 address with its port", () => {
    const headers = { forwarded: 'for=6.6.6.6;host=evil.test;proto=http, for="198.51.100.7:5123";proto=https;host="notes.example.com"' };
    expect(forwardedOrigin(deps, at(headers))).toBe("https://notes.example.com");
    expect(forwardedFor(deps, at(headers))).toBe("198.51.100.7");
  });

  test("a host that is not a host name keeps the request's own", () => {
    expect(forwardedOrigin(deps, at({ forwarded: 'proto=https;host="evil.test/path"' }))).toBe("https://127.0.0.1:8080");
  });
});

test("NOTESTREAM_TRUST_PROXY_HEADERS takes x-forwarded or forwarded, and refuses anything else by name", () => {
  expect(loadConfig({}).trustProxyHeaders).toBe("x-forwarded");
  expect(loadConfig({ NOTESTREAM_TRUST_PROXY_HEADERS: "Forwarded" }).trustProxyHeaders).toBe("forwarded");
  expect(() => loadConfig({ NOTESTREAM_TRUST_PROXY_HEADERS: "both" })).toThrow(ConfigError);
  expect(() => loadConfig({ NOTESTREAM_TRUST_PROXY_HEADERS: "both" })).toThrow(/NOTESTREAM_TRUST_PROXY_HEADERS must be x-forwarded .* or forwarded/);
});

test("without NOTESTREAM_TRUST_PROXY neither family is read", () => {
  const deps = depsWith({ NOTESTREAM_TRUST_PROXY: "false" });
  expect(forwardedOrigin(deps, at(BOTH))).toBeNull();
  expect(clientIp(deps, at(BOTH), "127.0.0.1")).toBe("127.0.0.1");
});
