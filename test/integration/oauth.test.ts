import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  exchangeAuthorization,
  extractWWWAuthenticateParams,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InvalidClientMetadataError, InvalidGrantError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { AuthorizationServerMetadata, OAuthClientInformationFull, OAuthMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { buildHandler } from "../../src/app";
import { runTask } from "../../src/schedule";
import { MAX_CLIENTS, REGISTRATIONS_PER_HOUR, UNUSED_CLIENT_TTL_MS } from "../../src/mcp/oauth/clients";
import type { PlanName } from "../../src/limits/plans";
import { harness, type Harness } from "../helpers/harness";

/**
 * OAuth 2.1 for the hosted MCP endpoint, end to end as an MCP client sees it: over a real HTTP
 * server, with the SDK's own discovery, registration, PKCE, token and MCP client code, and a
 * small cookie-keeping browser for sign-in and consent.
 */

const REDIRECT = "http://127.0.0.1:33418/callback";
const PASSWORD = "Str0ng!pass";

let h: Harness;
let server: ReturnType<typeof Bun.serve>;
let BASE: string;
const clients: Client[] = [];

beforeEach(() => {
  h = harness();
  const handle = buildHandler(h.deps);
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r, srv) => handle(r, srv.requestIP(r)?.address) });
  BASE = `http://127.0.0.1:${server.port}`;
  // Before the first request: every URL the server hands out is built from it.
  h.deps.config.baseUrl = BASE;
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  server.stop(true);
  await h.close();
});

const HTML_ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'" };
const unescapeHtml = (s: string) => s.replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => HTML_ENTITIES[e]!);

/** The hidden fields of a rendered page (the CSRF token, the consent form's echo of the request). */
function hiddenFields(page: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) out[m[1]!] = unescapeHtml(m[2]!);
  return out;
}

/** A tiny browser over real HTTP: keeps cookies, never follows redirects, posts forms with our Origin. */
class Browser {
  cookies = new Map<string, string>();
  async go(method: "GET" | "POST", url: string | URL, form?: Record<string, string>, origin: string | null = BASE) {
    const headers: Record<string, string> = {};
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    let body: string | undefined;
    if (form) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      if (origin !== null) headers.origin = origin;
      body = new URLSearchParams(form).toString();
    }
    const res = await fetch(new URL(url, BASE), { method, headers, body, redirect: "manual" });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const i = pair!.indexOf("=");
      this.cookies.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
    return { status: res.status, location: res.headers.get("location") ?? "", text: await res.text() };
  }
  get(url: string | URL) {
    return this.go("GET", url);
  }
  post(url: string | URL, form: Record<string, string>, origin: string | null = BASE) {
    return this.go("POST", url, form, origin);
  }
}

/** A confirmed account with a password, so it can sign in in the browser. */
async function accountWithPassword(plan: PlanName, email: string) {
  const a = await h.account(plan, email);
  h.deps.db.$client.run("UPDATE accounts SET password_hash = ? WHERE id = ?", [await Bun.password.hash(PASSWORD), a.accountId]);
  return a;
}

/** Steps 1 and 2 as the SDK does them, then registration (step 3). */
async function discoverAndRegister() {
  const resource = await discoverOAuthProtectedResourceMetadata(`${BASE}/mcp`, { resourceMetadataUrl: `${BASE}/.well-known/oauth-protected-resource/mcp` });
  const metadata = (await discoverAuthorizationServerMetadata(resource.authorization_servers![0]!))!;
  const client = await registerClient(BASE, { metadata, clientMetadata: { redirect_uris: [REDIRECT], client_name: "Test Agent" } });
  return { resource, metadata, client };
}

function authorizeParams(client: OAuthClientInformationFull, extra: Record<string, string> = {}) {
  const u = new URL(`${BASE}/oauth/authorize`);
  u.searchParams.set("response_type", "code");
  u.searchParams.set("client_id", client.client_id);
  u.searchParams.set("redirect_uri", REDIRECT);
  u.searchParams.set("state", "st-" + randomBytes(6).toString("hex"));
  for (const [k, v] of Object.entries(extra)) u.searchParams.set(k, v);
  return u;
}

/** Signs the browser in through the redirect the authorize endpoint gives a visitor without a session. */
async function signInVia(browser: Browser, authorizationUrl: URL, email: string) {
  const first = await browser.get(authorizationUrl);
  expect(first.status).toBe(303);
  const back = authorizationUrl.pathname + authorizationUrl.search;
  expect(first.location).toBe(`/signin?next=${encodeURIComponent(back)}`);
  const form = await browser.get(first.location);
  expect(form.status).toBe(200);
  expect(browser.cookies.has("ns_form")).toBe(true);
  const fields = hiddenFields(form.text);
  expect(fields.next).toBe(back);
  const signedIn = await browser.post("/signin", { _csrf: fields._csrf!, next: fields.next!, email, password: PASSWORD });
  expect(signedIn.status).toBe(303);
  expect(signedIn.location).toBe(back);
  expect(browser.cookies.get("ns_session")).toBeTruthy();
  return signedIn.location;
}

/** Shows the consent page to a signed-in browser and answers it. */
async function consent(browser: Browser, authorizationUrl: URL | string, decision: "allow" | "deny", tamper: Record<string, string> = {}) {
  const page = await browser.get(authorizationUrl);
  expect(page.status).toBe(200);
  const fields = hiddenFields(page.text);
  expect(fields._csrf).toBeTruthy();
  return { page: page.text, answer: await browser.post("/oauth/authorize", { ...fields, ...tamper, decision }) };
}

interface Grant {
  metadata: AuthorizationServerMetadata;
  client: OAuthClientInformationFull;
  tokens: OAuthTokens;
  account: { accountId: string; workspaceId: string; email: string };
  browser: Browser;
}

/** The whole flow for an account of this plan: discovery, registration, sign-in, consent, code exchange. */
async function grant(plan: PlanName, email = `${plan}-agent@example.com`): Promise<Grant> {
  const account = await accountWithPassword(plan, email);
  const { metadata, client } = await discoverAndRegister();
  const state = `state-${plan}`;
  const { authorizationUrl, codeVerifier } = await startAuthorization(BASE, { metadata, clientInformation: client, redirectUrl: REDIRECT, scope: "notes:read notes:write", state });
  const browser = new Browser();
  await signInVia(browser, authorizationUrl, email);
  const { answer } = await consent(browser, authorizationUrl, "allow");
  expect(answer.status).toBe(303);
  const cb = new URL(answer.location);
  expect(cb.searchParams.get("state")).toBe(state);
  const tokens = await exchangeAuthorization(BASE, { metadata, clientInformation: client, authorizationCode: cb.searchParams.get("code")!, codeVerifier, redirectUri: REDIRECT });
  return { metadata, client, tokens, account, browser };
}

/** The SDK's MCP client over Streamable HTTP, with the OAuth access token as Bearer. */
async function mcpClient(access: string): Promise<Client> {
  const client = new Client({ name: "oauth-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), { requestInit: { headers: { authorization: `Bearer ${access}` } } });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** A raw initialize at /mcp, to see the HTTP status a token (or none) gets. */
function rawMcp(authorization?: string, headers: Record<string, string> = {}) {
  return fetch(`${BASE}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(authorization ? { authorization: `Bearer ${authorization}` } : {}),
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
  });
}

async function expectMcpStatus(access: string, status: number) {
  const res = await rawMcp(access);
  await res.body?.cancel();
  expect(res.status).toBe(status);
}

function textOf(result: unknown): string {
  const content = (result as { content: { type: string; text: string }[] }).content;
  return content.map((c) => c.text).join("");
}

async function tokenPost(form: Record<string, string>) {
  const res = await fetch(`${BASE}/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(form).toString() });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const READ_TOOLS = ["list_notes", "read_note", "list_folders"];
const WRITE_TOOLS = ["append_note", "update_note", "delete_note", "create_note", "move_note", "create_folder", "rename_folder", "delete_folder"];

describe("discovery and registration", () => {
  test("an unauthenticated POST /mcp answers 401 naming the protected resource metadata, which names this server", async () => {
    const res = await rawMcp();
    expect(res.status).toBe(401);
    const header = res.headers.get("www-authenticate") ?? "";
    expect(header).toMatch(/^Bearer /);
    expect(header).toContain("resource_metadata=");
    const { resourceMetadataUrl, error } = extractWWWAuthenticateParams(res);
    await res.body?.cancel();
    expect(error).toBe("invalid_token");
    expect(resourceMetadataUrl?.href).toBe(`${BASE}/.well-known/oauth-protected-resource/mcp`);

    const raw = await fetch(resourceMetadataUrl!);
    expect(raw.status).toBe(200);
    const prm = (await raw.json()) as { resource: string; authorization_servers: string[] };
    expect(prm.resource).toBe(`${BASE}/mcp`);
    expect(prm.resource.endsWith("/mcp")).toBe(true);
    expect(prm.authorization_servers).toContain(BASE);
    // The SDK reads the same document.
    const viaSdk = await discoverOAuthProtectedResourceMetadata(`${BASE}/mcp`, { resourceMetadataUrl: resourceMetadataUrl! });
    expect(viaSdk.resource).toBe(`${BASE}/mcp`);
    expect(viaSdk.authorization_servers).toEqual([BASE]);

    // An unknown Bearer token gets the same challenge.
    const bad = await rawMcp("nso_notarealtoken");
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`);
    await bad.body?.cancel();
  });

  test("authorization server metadata (RFC 8414): S256 only, every endpoint on this server", async () => {
    const metadata = await discoverAuthorizationServerMetadata(BASE);
    expect(metadata).toBeDefined();
    // RFC 8414 metadata, not OpenID discovery: the SDK types it as the union of both.
    const m = metadata as OAuthMetadata;
    expect(m.issuer).toBe(BASE);
    expect(m.code_challenge_methods_supported).toEqual(["S256"]);
    expect(m.authorization_endpoint).toBe(`${BASE}/oauth/authorize`);
    expect(m.token_endpoint).toBe(`${BASE}/oauth/token`);
    expect(m.registration_endpoint).toBe(`${BASE}/oauth/register`);
    expect(m.revocation_endpoint).toBe(`${BASE}/oauth/revoke`);
    expect(m.response_types_supported).toEqual(["code"]);
    expect(m.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "refresh_token"]));
    expect(m.token_endpoint_auth_methods_supported).toEqual(["none"]);
  });

  test("dynamic client registration (RFC 7591): a loopback redirect is accepted, plain http elsewhere refused", async () => {
    const metadata = (await discoverAuthorizationServerMetadata(BASE))!;
    const client = await registerClient(BASE, { metadata, clientMetadata: { redirect_uris: [REDIRECT], client_name: "Test Agent" } });
    expect(client.client_id).toMatch(/^mcp_/);
    expect(client.client_name).toBe("Test Agent");
    expect(client.redirect_uris).toEqual([REDIRECT]);
    expect(client.token_endpoint_auth_method).toBe("none");
    expect(h.deps.db.$client.query("SELECT client_name FROM oauth_clients WHERE client_id = ?").get(client.client_id)).toEqual({ client_name: "Test Agent" });

    // The raw answer is 201.
    const raw = await fetch(metadata.registration_endpoint!, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: ["https://agent.example/cb"], client_name: "Raw" }),
    });
    expect(raw.status).toBe(201);
    expect(((await raw.json()) as { client_id: string }).client_id).toMatch(/^mcp_/);

    // http on a host that is not a loopback address: refused, through the SDK and raw.
    const refused = registerClient(BASE, { metadata, clientMetadata: { redirect_uris: ["http://evil.example/cb"], client_name: "Evil" } });
    await expect(refused).rejects.toBeInstanceOf(InvalidClientMetadataError);
    const rawRefused = await fetch(metadata.registration_endpoint!, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: ["http://evil.example/cb"], client_name: "Evil" }),
    });
    expect(rawRefused.status).toBe(400);
    expect(((await rawRefused.json()) as { error: string }).error).toBe("invalid_client_metadata");
    expect(h.deps.db.$client.query("SELECT count(*) AS n FROM oauth_clients").get()).toEqual({ n: 2 });
  });
});

describe("authorization code with PKCE", () => {
  test("sign-in, consent naming the client and its access, code with the original state, code for tokens; a code works once, only with its verifier", async () => {
    const account = await accountWithPassword("dev", "consent@example.com");
    const { metadata, client } = await discoverAndRegister();
    const state = "xyz-state-42";
    const { authorizationUrl, codeVerifier } = await startAuthorization(BASE, { metadata, clientInformation: client, redirectUrl: REDIRECT, state });
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${BASE}/oauth/authorize`);
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorizationUrl.searchParams.get("code_challenge")).toBe(createHash("sha256").update(codeVerifier).digest("base64url"));

    const browser = new Browser();
    const back = await signInVia(browser, authorizationUrl, account.email);

    const { page, answer } = await consent(browser, back, "allow");
    expect(page).toContain("Allow Test Agent <span class=\"muted\">(unverified name)</span>?");
    expect(page).toContain("<strong>Test Agent</strong> wants to use your notestream account <strong>consent@example.com</strong>");
    expect(page).toContain("read your notes and folders");
    expect(page).toContain("create, edit, append to, move and delete your notes and folders");
    expect(page).toContain('name="decision" value="allow"');
    expect(page).toContain('name="decision" value="deny"');

    expect(answer.status).toBe(303);
    const cb = new URL(answer.location);
    expect(cb.origin + cb.pathname).toBe(REDIRECT);
    expect(cb.searchParams.get("state")).toBe(state);
    expect(cb.searchParams.get("iss")).toBe(BASE);
    const code = cb.searchParams.get("code")!;
    expect(code).toMatch(/^\w{20,}$/);

    // A wrong verifier is refused.
    const wrong = exchangeAuthorization(BASE, { metadata, clientInformation: client, authorizationCode: code, codeVerifier: "x".repeat(64), redirectUri: REDIRECT });
    await expect(wrong).rejects.toBeInstanceOf(InvalidGrantError);

    const tokens = await exchangeAuthorization(BASE, { metadata, clientInformation: client, authorizationCode: code, codeVerifier, redirectUri: REDIRECT });
    expect(tokens.access_token).toMatch(/^nso_/);
    expect(tokens.refresh_token).toMatch(/^nsr_/);
    expect(tokens.token_type).toBe("Bearer");
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope).toBe("notes:read notes:write");

    // The code worked once.
    const again = exchangeAuthorization(BASE, { metadata, clientInformation: client, authorizationCode: code, codeVerifier, redirectUri: REDIRECT });
    await expect(again).rejects.toBeInstanceOf(InvalidGrantError);
    const raw = await tokenPost({ grant_type: "authorization_code", code, code_verifier: codeVerifier, client_id: client.client_id, redirect_uri: REDIRECT });
    expect(raw.status).toBe(400);
    expect(raw.body.error).toBe("invalid_grant");

    // And the grant is the signed-in account's.
    const row = h.deps.db.$client.query("SELECT account_id, workspace_id, scope FROM oauth_tokens WHERE kind = 'access'").get() as Record<string, string>;
    expect(row).toEqual({ account_id: account.accountId, workspace_id: account.workspaceId, scope: "notes:read notes:write" });
  });

  test("a wrong verifier on a fresh code answers invalid_grant over plain form posts too", async () => {
    const account = await accountWithPassword("dev", "verifier@example.com");
    const { client } = await discoverAndRegister();
    const verifier = randomBytes(32).toString("base64url");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const url = authorizeParams(client, { code_challenge: challenge, code_challenge_method: "S256" });
    const browser = new Browser();
    await signInVia(browser, url, account.email);
    const { answer } = await consent(browser, url, "allow");
    const cb = new URL(answer.location);
    expect(cb.searchParams.get("state")).toBe(url.searchParams.get("state"));
    const code = cb.searchParams.get("code")!;
    const base = { grant_type: "authorization_code", code, client_id: client.client_id, redirect_uri: REDIRECT };

    const wrong = await tokenPost({ ...base, code_verifier: randomBytes(32).toString("base64url") });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");
    const otherRedirect = await tokenPost({ ...base, code_verifier: verifier, redirect_uri: "http://127.0.0.1:1/other" });
    expect(otherRedirect.body.error).toBe("invalid_grant");
    const missing = await tokenPost({ grant_type: "authorization_code", code, client_id: client.client_id, redirect_uri: REDIRECT });
    expect(missing.body.error).toBe("invalid_request");

    const ok = await tokenPost({ ...base, code_verifier: verifier });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ token_type: "Bearer", expires_in: 3600 });
    expect(ok.body.access_token).toEqual(expect.stringMatching(/^nso_/));
    expect(ok.body.refresh_token).toEqual(expect.stringMatching(/^nsr_/));
  });

  test("deny gives error=access_denied with the state; without S256 PKCE the request is refused and no code is made", async () => {
    const account = await accountWithPassword("dev", "denier@example.com");
    const { metadata, client } = await discoverAndRegister();
    const { authorizationUrl } = await startAuthorization(BASE, { metadata, clientInformation: client, redirectUrl: REDIRECT, state: "deny-me" });
    const browser = new Browser();
    await signInVia(browser, authorizationUrl, account.email);
    const { answer } = await consent(browser, authorizationUrl, "deny");
    expect(answer.status).toBe(303);
    const denied = new URL(answer.location);
    expect(denied.origin + denied.pathname).toBe(REDIRECT);
    expect(denied.searchParams.get("error")).toBe("access_denied");
    expect(denied.searchParams.get("state")).toBe("deny-me");
    expect(denied.searchParams.has("code")).toBe(false);

    // No code_challenge at all: refused before any consent, signed in or not.
    for (const who of [browser, new Browser()]) {
      const noPkce = await who.get(authorizationUrl.href.replace(/&code_challenge=[^&]+/, ""));
      expect(noPkce.status).toBe(303);
      const u = new URL(noPkce.location);
      expect(u.origin + u.pathname).toBe(REDIRECT);
      expect(u.searchParams.get("error")).toBe("invalid_request");
      expect(u.searchParams.get("state")).toBe("deny-me");
      expect(u.searchParams.has("code")).toBe(false);
    }
    // The plain method is not S256.
    const plain = new URL(authorizationUrl);
    plain.searchParams.set("code_challenge_method", "plain");
    const plainAnswer = await browser.get(plain);
    expect(new URL(plainAnswer.location).searchParams.get("error")).toBe("invalid_request");
    // A consent form posted with its challenge stripped is refused as well.
    const { answer: stripped } = await consent(browser, authorizationUrl, "allow", { code_challenge: "" });
    expect(new URL(stripped.location).searchParams.get("error")).toBe("invalid_request");
    // An unregistered redirect URI is shown an error page, never redirected to.
    const elsewhere = new URL(authorizationUrl);
    elsewhere.searchParams.set("redirect_uri", "https://evil.example/cb");
    const bad = await browser.get(elsewhere);
    expect(bad.status).toBe(400);
    expect(bad.location).toBe("");

    expect(h.deps.db.$client.query("SELECT count(*) AS n FROM oauth_codes").get()).toEqual({ n: 0 });
  });

  test("the consent form needs the session's CSRF token and our Origin", async () => {
    const account = await accountWithPassword("dev", "csrf@example.com");
    const { metadata, client } = await discoverAndRegister();
    const { authorizationUrl } = await startAuthorization(BASE, { metadata, clientInformation: client, redirectUrl: REDIRECT, state: "s" });
    const browser = new Browser();
    await signInVia(browser, authorizationUrl, account.email);
    const fields = hiddenFields((await browser.get(authorizationUrl)).text);
    expect((await browser.post("/oauth/authorize", { ...fields, _csrf: "forged", decision: "allow" })).status).toBe(403);
    expect((await browser.post("/oauth/authorize", { ...fields, decision: "allow" }, "https://evil.example")).status).toBe(403);
    expect(h.deps.db.$client.query("SELECT count(*) AS n FROM oauth_codes").get()).toEqual({ n: 0 });
  });
});

describe("the MCP client with an OAuth access token", () => {
  test("a dev account: the tools are listed, list_folders and append_note work, the note exists", async () => {
    const g = await grant("dev");
    const client = await mcpClient(g.tokens.access_token);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining([...READ_TOOLS, ...WRITE_TOOLS]));
    expect(names).toHaveLength(READ_TOOLS.length + WRITE_TOOLS.length);

    const folders = await client.callTool({ name: "list_folders", arguments: {} });
    expect(folders.isError).toBeFalsy();
    expect(JSON.parse(textOf(folders)).folders.length).toBe(3);

    const appended = await client.callTool({ name: "append_note", arguments: { filename: "agent.log", text: "deployed v1.2 from the agent" } });
    expect(appended.isError).toBeFalsy();
    const note = JSON.parse(textOf(appended)) as { id: string };
    expect(note.id).toMatch(/^note_/);

    const row = h.deps.db.$client.query("SELECT id, workspace_id, kind FROM notes WHERE filename = 'agent.log'").get();
    expect(row).toEqual({ id: note.id, workspace_id: g.account.workspaceId, kind: "stream" });
    const read = await client.callTool({ name: "read_note", arguments: { id: note.id } });
    expect(read.isError).toBeFalsy();
    expect(JSON.parse(textOf(read)).plain_body).toBe("deployed v1.2 from the agent\n");
  });

  test("a free account: reads work, append_note is a tool error plan_required", async () => {
    const g = await grant("free");
    const client = await mcpClient(g.tokens.access_token);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["list_notes", "append_note"]));

    const listed = await client.callTool({ name: "list_notes", arguments: {} });
    expect(listed.isError).toBeFalsy();
    expect(JSON.parse(textOf(listed))).toMatchObject({ total: 0 });
    const folders = await client.callTool({ name: "list_folders", arguments: {} });
    expect(folders.isError).toBeFalsy();

    const appended = await client.callTool({ name: "append_note", arguments: { filename: "agent.log", text: "not allowed" } });
    expect(appended.isError).toBe(true);
    expect(textOf(appended)).toStartWith("plan_required:");
    expect(h.deps.db.$client.query("SELECT count(*) AS n FROM notes").get()).toEqual({ n: 0 });
  });

  test("a browser-based client on another origin calls /mcp with its Bearer token and reads the CORS answer; an operator's allowlist refuses the rest", async () => {
    const g = await grant("dev");
    const foreign = await rawMcp(g.tokens.access_token, { origin: "https://inspector.example" });
    expect(foreign.status).toBe(200);
    expect(foreign.headers.get("access-control-allow-origin")).toBe("https://inspector.example");
    await foreign.body?.cancel();
    // Without a token it is the usual 401, its challenge readable by the page.
    const anon = await rawMcp(undefined, { origin: "https://inspector.example" });
    expect(anon.status).toBe(401);
    expect(anon.headers.get("access-control-expose-headers")).toContain("WWW-Authenticate");
    await anon.body?.cancel();
    const ours = await rawMcp(g.tokens.access_token, { origin: BASE });
    expect(ours.status).toBe(200);
    await ours.body?.cancel();
  });

  test("preflights from a browser are answered before any other check, on /mcp and the OAuth endpoints", async () => {
    for (const path of ["/mcp", "/oauth/token", "/oauth/register", "/oauth/revoke", "/.well-known/oauth-authorization-server"]) {
      const res = await h.request("OPTIONS", path, {
        headers: { origin: "https://inspector.example", "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type, mcp-protocol-version" },
      });
      expect([path, res.status]).toEqual([path, 204]);
      expect(res.headers.get("access-control-allow-origin")).toBe("https://inspector.example");
      expect(res.headers.get("access-control-allow-headers")).toContain("Mcp-Protocol-Version");
      expect(res.headers.get("access-control-allow-headers")).toContain("Authorization");
    }
    // The pages, which use cookies, get no CORS.
    const page = await h.request("OPTIONS", "/signin", { headers: { origin: "https://inspector.example", "access-control-request-method": "POST" } });
    expect(page.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("an access token ends after its hour", async () => {
    const g = await grant("dev");
    await expectMcpStatus(g.tokens.access_token, 200);
    h.clock.advance(3600_000);
    await expectMcpStatus(g.tokens.access_token, 401);
  });
});

describe("refresh and revocation", () => {
  test("refresh rotates the pair: the new access token works, the old one answers 401", async () => {
    const g = await grant("dev");
    const old = g.tokens;
    await expectMcpStatus(old.access_token, 200);

    const fresh = await refreshAuthorization(BASE, { metadata: g.metadata, clientInformation: g.client, refreshToken: old.refresh_token! });
    expect(fresh.access_token).toMatch(/^nso_/);
    expect(fresh.refresh_token).toMatch(/^nsr_/);
    expect(fresh.access_token).not.toBe(old.access_token);
    expect(fresh.refresh_token).not.toBe(old.refresh_token);
    expect(fresh.token_type).toBe("Bearer");
    expect(fresh.expires_in).toBe(3600);

    await expectMcpStatus(old.access_token, 401);
    await expectMcpStatus(fresh.access_token, 200);
    const client = await mcpClient(fresh.access_token);
    expect((await client.callTool({ name: "list_notes", arguments: {} })).isError).toBeFalsy();

    // A refresh may narrow the scope, never widen it.
    const narrowed = await tokenPost({ grant_type: "refresh_token", refresh_token: fresh.refresh_token!, client_id: g.client.client_id, scope: "notes:read" });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.scope).toBe("notes:read");
    const widened = await tokenPost({ grant_type: "refresh_token", refresh_token: narrowed.body.refresh_token as string, client_id: g.client.client_id, scope: "notes:read notes:write" });
    expect(widened.body.error).toBe("invalid_grant");
    const readOnly = await mcpClient(narrowed.body.access_token as string);
    const names = (await readOnly.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual([...READ_TOOLS].sort());
  });

  test("reusing a rotated refresh token answers invalid_grant and ends the whole grant, the new pair too", async () => {
    const g = await grant("dev");
    const old = g.tokens;
    const fresh = await refreshAuthorization(BASE, { metadata: g.metadata, clientInformation: g.client, refreshToken: old.refresh_token! });
    await expectMcpStatus(fresh.access_token, 200);

    const reuse = refreshAuthorization(BASE, { metadata: g.metadata, clientInformation: g.client, refreshToken: old.refresh_token! });
    await expect(reuse).rejects.toBeInstanceOf(InvalidGrantError);

    // The replay may be a thief: the pair issued by the rotation ends as well (RFC 9700 4.14.2).
    await expectMcpStatus(fresh.access_token, 401);
    const next = await tokenPost({ grant_type: "refresh_token", refresh_token: fresh.refresh_token!, client_id: g.client.client_id });
    expect(next.status).toBe(400);
    expect(next.body.error).toBe("invalid_grant");
  });

  test("revoking the refresh token (RFC 7009) ends the grant: /mcp answers 401 with its access token", async () => {
    const g = await grant("dev");
    await expectMcpStatus(g.tokens.access_token, 200);
    const revocationEndpoint = (g.metadata as OAuthMetadata).revocation_endpoint;
    expect(revocationEndpoint).toBe(`${BASE}/oauth/revoke`);
    const res = await fetch(revocationEndpoint!, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: g.tokens.refresh_token!, client_id: g.client.client_id }).toString(),
    });
    expect(res.status).toBe(200);
    await expectMcpStatus(g.tokens.access_token, 401);
    const refreshed = await tokenPost({ grant_type: "refresh_token", refresh_token: g.tokens.refresh_token!, client_id: g.client.client_id });
    expect(refreshed.body.error).toBe("invalid_grant");
  });

  test("revoking the access token ends it too; an unknown token is answered 200 as well", async () => {
    const g = await grant("dev");
    const revoke = (token: string) =>
      fetch(`${BASE}/oauth/revoke`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ token }).toString() });
    expect((await revoke(g.tokens.access_token)).status).toBe(200);
    await expectMcpStatus(g.tokens.access_token, 401);
    expect((await revoke("nsr_unknown")).status).toBe(200);
    const missing = await fetch(`${BASE}/oauth/revoke`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "" });
    expect(missing.status).toBe(400);
  });
});

describe("spoofed clients and registration abuse", () => {
  /** Registers straight at the endpoint, as an attacker's script would, from `ip`. */
  function register(clientMeta: Record<string, unknown>, ip = "127.0.0.1") {
    return h.request("POST", "/oauth/register", { body: clientMeta, ip });
  }

  /** A signed-in browser on the consent page of `client` for `redirect`. */
  async function consentPageFor(clientId: string, redirect: string, email: string) {
    const verifier = randomBytes(32).toString("base64url");
    const url = new URL(`${BASE}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      response_type: "code",
      client_id: clientId,
      redirect_uri: redirect,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
      state: "s",
    }))
      url.searchParams.set(k, v);
    const browser = new Browser();
    await signInVia(browser, url, email);
    const page = await browser.get(url);
    expect(page.status).toBe(200);
    return { page: page.text, url, browser, verifier };
  }

  test("a client calling itself Claude Desktop is shown as an unverified name, with the host its code goes to before the Allow button", async () => {
    const account = await accountWithPassword("dev", "spoofed@example.com");
    const res = await register({ client_name: "Claude Desktop", redirect_uris: ["https://evil.example/cb"] });
    expect(res.status).toBe(201);
    const { client_id } = (await res.json()) as { client_id: string };

    const { page } = await consentPageFor(client_id, "https://evil.example/cb", account.email);
    expect(page).not.toContain("Allow Claude Desktop?");
    expect(page).toContain("Claude Desktop <span class=\"muted\">(unverified name)</span>");
    expect(page).toContain("supplied by the application itself and is not verified");
    const destination = page.indexOf("After you allow, you will be sent to <strong>evil.example</strong>");
    expect(destination).toBeGreaterThan(0);
    expect(destination).toBeLessThan(page.indexOf('name="decision" value="allow"'));
  });

  test("a loopback redirect is named as an app on this computer with its port, a private-use scheme by its scheme, and names stay escaped", async () => {
    const account = await accountWithPassword("dev", "native@example.com");
    const res = await register({ client_name: "<b>Agent</b>", redirect_uris: [REDIRECT, "com.example.agent:/oauth/cb"] });
    const { client_id } = (await res.json()) as { client_id: string };

    const loopback = await consentPageFor(client_id, REDIRECT, account.email);
    expect(loopback.page).toContain("After you allow, you will be sent back to <strong>an app on this computer</strong> (port 33418)");
    expect(loopback.page).toContain("&lt;b&gt;Agent&lt;/b&gt; <span class=\"muted\">(unverified name)</span>");
    expect(loopback.page).not.toContain("<b>Agent</b>");

    const scheme = await loopback.browser.get(new URL(loopback.url.href.replace(encodeURIComponent(REDIRECT), encodeURIComponent("com.example.agent:/oauth/cb"))));
    expect(scheme.status).toBe(200);
    expect(scheme.text).toContain("After you allow, you will be sent to <strong>the app that opens com.example.agent: links</strong>");
  });

  test(`the ${REGISTRATIONS_PER_HOUR + 1}th registration from one address in an hour answers 429 with Retry-After; another address still registers`, async () => {
    const meta = { client_name: "Flood", redirect_uris: ["https://flood.example/cb"] };
    for (let i = 0; i < REGISTRATIONS_PER_HOUR; i++) expect((await register(meta, "203.0.113.7")).status).toBe(201);

    const refused = await register(meta, "203.0.113.7");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(3600);
    const body = (await refused.json()) as { error: string; error_description: string };
    expect(body.error).toBe("too_many_requests");
    expect(body.error_description).toContain(`${REGISTRATIONS_PER_HOUR}`);
    expect(h.deps.db.$client.query("SELECT count(*) AS n FROM oauth_clients").get()).toEqual({ n: REGISTRATIONS_PER_HOUR });

    expect((await register(meta, "198.51.100.9")).status).toBe(201);
    h.clock.advance(3600_000);
    expect((await register(meta, "203.0.113.7")).status).toBe(201);
  });

  test("a client that never completed a grant is deleted 24 hours after registering; a client with a grant stays and keeps working", async () => {
    const g = await grant("dev");
    const unused = (await (await register({ client_name: "Never used", redirect_uris: ["https://unused.example/cb"] })).json()) as { client_id: string };
    const exists = (id: string) => h.deps.db.$client.query("SELECT 1 AS x FROM oauth_clients WHERE client_id = ?").get(id) !== null;

    h.clock.advance(UNUSED_CLIENT_TTL_MS - 60_000);
    await runTask(h.deps, "oauth-client-expiry");
    expect(exists(unused.client_id)).toBe(true);

    h.clock.advance(60_000);
    await runTask(h.deps, "oauth-client-expiry");
    expect(exists(unused.client_id)).toBe(false);
    expect(exists(g.client.client_id)).toBe(true);
    const browser = new Browser();
    const gone = await browser.get(authorizeParams({ ...g.client, client_id: unused.client_id }));
    expect(gone.status).toBe(400);
    expect(gone.text).toContain("Unknown application");

    const fresh = await refreshAuthorization(BASE, { metadata: g.metadata, clientInformation: g.client, refreshToken: g.tokens.refresh_token! });
    await expectMcpStatus(fresh.access_token, 200);
  });

  test("a client whose code is still waiting to be exchanged at the 24-hour mark is kept, and the exchange works", async () => {
    const account = await accountWithPassword("dev", "slow@example.com");
    const res = await register({ client_name: "Slow", redirect_uris: [REDIRECT] });
    const { client_id } = (await res.json()) as { client_id: string };
    h.clock.advance(UNUSED_CLIENT_TTL_MS - 5 * 60_000);
    const { page, browser, verifier } = await consentPageFor(client_id, REDIRECT, account.email);
    const answer = await browser.post("/oauth/authorize", { ...hiddenFields(page), decision: "allow" });
    const code = new URL(answer.location).searchParams.get("code")!;

    h.clock.advance(6 * 60_000);
    await runTask(h.deps, "oauth-client-expiry");
    const ok = await tokenPost({ grant_type: "authorization_code", code, code_verifier: verifier, client_id, redirect_uri: REDIRECT });
    expect(ok.status).toBe(200);
  });

  test(`registration stops at ${MAX_CLIENTS} clients with temporarily_unavailable, after first deleting unused ones past their 24 hours`, async () => {
    const now = h.clock.now();
    const insert = h.deps.db.$client.prepare("INSERT INTO oauth_clients (client_id, client_name, redirect_uris, metadata, created_at) VALUES (?, 'Filler', '[]', '{}', ?)");
    h.deps.db.$client.transaction(() => {
      // One unused client past its 24 hours, the rest fresh.
      insert.run("mcp_old", now - UNUSED_CLIENT_TTL_MS - 1);
      for (let i = 1; i < MAX_CLIENTS; i++) insert.run(`mcp_fill${i}`, now);
    })();
    const count = () => (h.deps.db.$client.query("SELECT count(*) AS n FROM oauth_clients").get() as { n: number }).n;
    expect(count()).toBe(MAX_CLIENTS);

    const meta = { client_name: "Late", redirect_uris: ["https://late.example/cb"] };
    const admitted = await register(meta);
    expect(admitted.status).toBe(201);
    expect(h.deps.db.$client.query("SELECT 1 AS x FROM oauth_clients WHERE client_id = 'mcp_old'").get()).toBeNull();
    expect(count()).toBe(MAX_CLIENTS);

    const refused = await register(meta);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe(String(UNUSED_CLIENT_TTL_MS / 1000));
    const body = (await refused.json()) as { error: string; error_description: string };
    expect(body.error).toBe("temporarily_unavailable");
    expect(body.error_description).toContain(String(MAX_CLIENTS));
    expect(count()).toBe(MAX_CLIENTS);
  });
});
