/**
 * Behind a reverse proxy: the origin the client used, as the proxy's own header family recorded
 * it, decides links, inbox URLs, OAuth metadata and Secure cookies.
 */
import { afterEach, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config";
import { harness, type Harness } from "../helpers/harness";

let h: Harness;
afterEach(() => h.close());

const behindProxy = (env: Record<string, string> = {}) => harness({ env: { NOTESTREAM_BASE_URL: "", NOTESTREAM_TRUST_PROXY: "1", ...env } });

test("X-Forwarded-Proto and -Host decide the inbox URL and the list links when no base URL is set", async () => {
  h = await behindProxy();
  const token = await h.token(await h.account("dev"));
  const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/s.log/append", { token, body: { text: "x" } })).json();
  const forwarded = { "x-forwarded-proto": "https", "x-forwarded-host": "notes.example.com" };
  const inbox = await (await h.request("POST", `/api/v1/notes/${id}/inbox`, { token, headers: forwarded })).json();
  expect(inbox.inbox_url).toStartWith("https://notes.example.com/h/inb_");
  const list = await h.request("GET", "/api/v1/notes?limit=1", { token, headers: forwarded });
  expect(list.headers.get("link")).toContain("<https://notes.example.com/api/v1/notes?");
});

test("with NOTESTREAM_TRUST_PROXY_HEADERS=forwarded the Forwarded header (RFC 7239) decides, and the outermost trusted proxy's value wins", async () => {
  h = await behindProxy({ NOTESTREAM_TRUST_PROXY_HEADERS: "forwarded" });
  const token = await h.token(await h.account("dev"));
  const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/s.log/append", { token, body: { text: "x" } })).json();
  // The client forged the first element; the one proxy we trust appended the last.
  const headers = { forwarded: 'proto=http;host=evil.example, proto=https;host="notes.example.com"' };
  const inbox = await (await h.request("POST", `/api/v1/notes/${id}/inbox`, { token, headers })).json();
  expect(inbox.inbox_url).toStartWith("https://notes.example.com/h/");
});

test("behind a proxy that writes X-Forwarded-*, a client's own Forwarded header decides nothing", async () => {
  h = await behindProxy();
  const token = await h.token(await h.account("dev"));
  const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/s.log/append", { token, body: { text: "x" } })).json();
  const headers = { forwarded: "host=evil.test;proto=https", "x-forwarded-proto": "https", "x-forwarded-host": "notes.example.com" };
  const inbox = await (await h.request("POST", `/api/v1/notes/${id}/inbox`, { token, headers })).json();
  expect(inbox.inbox_url).toStartWith("https://notes.example.com/h/");
  const alone = await (await h.request("POST", `/api/v1/notes/${id}/inbox`, { token, headers: { forwarded: "host=evil.test;proto=https" } })).json();
  expect(alone.inbox_url).toStartWith("http://notestream.test/h/");
});

test("with NOTESTREAM_TRUST_PROXY_HEADERS=forwarded, a client's X-Forwarded-* decide nothing", async () => {
  h = await behindProxy({ NOTESTREAM_TRUST_PROXY_HEADERS: "forwarded" });
  const token = await h.token(await h.account("dev"));
  const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/s.log/append", { token, body: { text: "x" } })).json();
  const headers = { forwarded: 'proto=https;host="notes.example.com"', "x-forwarded-proto": "http", "x-forwarded-host": "evil.test" };
  const inbox = await (await h.request("POST", `/api/v1/notes/${id}/inbox`, { token, headers })).json();
  expect(inbox.inbox_url).toStartWith("https://notes.example.com/h/");
});

test("the OAuth metadata names the origin the proxy wrote, never a client's Forwarded, and no cache keeps it", async () => {
  h = await behindProxy();
  const headers = { forwarded: "host=evil.test;proto=https", "x-forwarded-proto": "https", "x-forwarded-host": "notes.example.com" };
  const server = await h.request("GET", "/.well-known/oauth-authorization-server", { headers });
  expect(server.status).toBe(200);
  const meta = await server.json();
  expect(meta.issuer).toBe("https://notes.example.com");
  expect(meta.token_endpoint).toBe("https://notes.example.com/oauth/token");
  expect(server.headers.get("cache-control")).toBe("no-store");
  const resource = await h.request("GET", "/.well-known/oauth-protected-resource/mcp", { headers });
  expect((await resource.json()).resource).toBe("https://notes.example.com/mcp");
  expect(resource.headers.get("cache-control")).toBe("no-store");
});

test("with a base URL the OAuth metadata is the same for every request: cacheable, varying on Origin once", async () => {
  h = await harness();
  for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource"]) {
    const plain = await h.request("GET", path);
    expect(plain.headers.get("cache-control")).toBe("public, max-age=3600");
    expect(plain.headers.get("vary")).toBe("Origin");
    const json = await plain.json();
    expect(json.issuer ?? json.authorization_servers[0]).toBe("http://notestream.test");
    const cors = await h.request("GET", path, { headers: { origin: "https://inspector.example" } });
    expect(cors.headers.get("access-control-allow-origin")).toBe("https://inspector.example");
    expect(cors.headers.get("vary")).toBe("Origin");
  }
});

test("cookies are Secure when the client's origin is https, and not on plain http", async () => {
  h = await behindProxy();
  const https = await h.request("GET", "/signin", { headers: { "x-forwarded-proto": "https", "x-forwarded-host": "notes.example.com" } });
  expect(https.headers.getSetCookie().length).toBeGreaterThan(0);
  for (const c of https.headers.getSetCookie()) expect(c).toMatch(/; Secure$/);
  const http = await h.request("GET", "/signin");
  for (const c of http.headers.getSetCookie()) expect(c).not.toContain("Secure");
});

test("without NOTESTREAM_TRUST_PROXY forwarded headers are ignored", async () => {
  h = await harness({ env: { NOTESTREAM_BASE_URL: "" } });
  const token = await h.token(await h.account("dev"));
  const { id } = await (await h.request("POST", "/api/v1/notes/by-filename/s.log/append", { token, body: { text: "x" } })).json();
  const inbox = await (await h.request("POST", `/api/v1/notes/${id}/inbox`, { token, headers: { "x-forwarded-proto": "https", "x-forwarded-host": "evil.example" } })).json();
  expect(inbox.inbox_url).toStartWith("http://notestream.test/h/");
  const page = await h.request("GET", "/signin", { headers: { "x-forwarded-proto": "https" } });
  for (const c of page.headers.getSetCookie()) expect(c).not.toContain("Secure");
});

test("a base URL with a path is refused at start with a clear message", () => {
  expect(() => loadConfig({ NOTESTREAM_BASE_URL: "https://example.com/notes" })).toThrow(ConfigError);
  expect(() => loadConfig({ NOTESTREAM_BASE_URL: "https://example.com/notes" })).toThrow(/without a path/);
  expect(loadConfig({ NOTESTREAM_BASE_URL: "https://example.com/" }).baseUrl).toBe("https://example.com");
});
