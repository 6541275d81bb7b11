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
import { Client as ModernClient, SdkHttpError, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InvalidClientMetadataError, InvalidGrantError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { AuthorizationServerMetadata, OAuthClientInformationFull, OAuthMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { count, eq } from "drizzle-orm";
import { buildHandler } from "../../src/app";
import { accounts, notes, oauthClients, oauthCodes, oauthTokens } from "../../src/db/tables";
import { runTask } from "../../src/schedule";
import { MAX_CLIENTS, REGISTRATIONS_PER_HOUR, UNUSED_CLIENT_TTL_MS } from "../../src/modules/oauth/clients";
import { REFRESH_GRACE_MS } from "../../src/modules/oauth/tokens";
import { parseCidr } from "../../src/lib/ip";
import type { PlanName } from "../../src/limits/plans";
import { oauthList, oauthRevoke } from "../../src/cli/commands";
import { UsageError } from "../../src/cli/args";
import { harness, type Harness } from "../helpers/harness";
import { connectV1 } from "../helpers/mcp-hosted";

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

beforeEach(async () => {
  h = await harness();
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

/** How many rows a table holds. */
async function rowsIn(table: typeof notes | typeof oauthClients | typeof oauthCodes | typeof oauthTokens): Promise<number> {
  return (await h.deps.db.select({ n: count() }).from(table))[0]!.n;
}

/** A client's stored name and metadata, if it is stored. */
async function storedClient(clientId: string) {
  const [row] = await h.deps.db.select({ client_name: oauthClients.clientName, metadata: oauthClients.metadata }).from(oauthClients).where(eq(oauthClients.clientId, clientId));
  return row;
}

/** A confirmed account with a password, so it can sign in in the browser. */
async function accountWithPassword(plan: PlanName, email: string) {
  const a = await h.account(plan, email);
  await h.deps.db.update(accounts).set({ passwordHash: await Bun.password.hash(PASSWORD) }).where(eq(accounts.id, a.accountId));
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
async function signInVia(browser: Browser, authorizationUrl: URL, email: string, password = PASSWORD) {
  const first = await browser.get(authorizationUrl);
  expect(first.status).toBe(303);
  const back = authorizationUrl.pathname + authorizationUrl.search;
  expect(first.location).toBe(`/signin?next=${encodeURIComponent(back)}`);
  const form = await browser.get(first.location);
  expect(form.status).toBe(200);
  expect(browser.cookies.has("ns_form")).toBe(true);
  const fields = hiddenFields(form.text);
  expect(fields.next).toBe(back);
  const signedIn = await browser.post("/signin", { _csrf: fields._csrf!, next: fields.next!, email, password });
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
const mcpClient = (access: string) => connectV1(BASE, access, "oauth-test", clients);

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
    const { resourceMetadataUrl, error, scope } = extractWWWAuthenticateParams(res);
    await res.body?.cancel();
    // No credentials: no error code (RFC 6750 3.1), and the scope a client should ask for.
    expect(error).toBeUndefined();
    expect(header).not.toContain("error");
    expect(scope).toBe("notes:read notes:write");
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

    // An unknown Bearer token gets the same challenge, now with invalid_token.
    const bad = await rawMcp("nso_notarealtoken");
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`);
    expect(extractWWWAuthenticateParams(bad).error).toBe("invalid_token");
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
    expect((await storedClient(client.client_id))?.client_name).toBe("Test Agent");

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
    expect(await rowsIn(oauthClients)).toBe(2);
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
    const [row] = await h.deps.db
      .select({ account_id: oauthTokens.accountId, workspace_id: oauthTokens.workspaceId, scope: oauthTokens.scope })
      .from(oauthTokens)
      .where(eq(oauthTokens.kind, "access"))
      .limit(1);
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

    expect(await rowsIn(oauthCodes)).toBe(0);
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
    expect(await rowsIn(oauthCodes)).toBe(0);
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

    const [row] = await h.deps.db.select({ id: notes.id, workspace_id: notes.workspaceId, kind: notes.kind }).from(notes).where(eq(notes.filename, "agent.log"));
    expect(row).toEqual({ id: note.id, workspace_id: g.account.workspaceId, kind: "stream" });
    const read = await client.callTool({ name: "read_note", arguments: { id: note.id } });
    expect(read.isError).toBeFalsy();
    expect(JSON.parse(textOf(read)).plain_body).toBe("deployed v1.2 from the agent\n");
  });

  test("a 2026-07-28 client (the SDK's v2 client) works with the access token; without one its server/discover gets the challenge", async () => {
    const g = await grant("dev", "modern-agent@example.com");
    const connect = async (headers: Record<string, string>) => {
      const client = new ModernClient({ name: "oauth-modern", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
      await client.connect(new ModernTransport(new URL(`${BASE}/mcp`), { requestInit: { headers } }));
      return client;
    };
    const client = await connect({ authorization: `Bearer ${g.tokens.access_token}` });
    expect(client.getProtocolEra()).toBe("modern");
    const appended = await client.callTool({ name: "append_note", arguments: { filename: "modern.log", text: "from a stateless client" } });
    expect(appended.isError).toBeFalsy();
    expect(JSON.parse(textOf(appended))).toMatchObject({ filename: "modern.log", created: true });
    await client.close();

    // The challenge a client signs in from is the one 2025-11-25 clients get: the same 401 before any MCP.
    const refused = await connect({}).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SdkHttpError);
    expect((refused as SdkHttpError).status).toBe(401);
    const probe = await fetch(`${BASE}/mcp`, { method: "POST", headers: { "content-type": "application/json", "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" }, body: "{}" });
    expect(probe.status).toBe(401);
    expect(probe.headers.get("www-authenticate")).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`);
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
    expect(await rowsIn(notes)).toBe(0);
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

  test("reusing a rotated refresh token after the grace window answers invalid_grant and ends the whole grant, the new pair too", async () => {
    const g = await grant("dev");
    const old = g.tokens;
    const fresh = await refreshAuthorization(BASE, { metadata: g.metadata, clientInformation: g.client, refreshToken: old.refresh_token! });
    await expectMcpStatus(fresh.access_token, 200);
    h.clock.advance(REFRESH_GRACE_MS + 1);

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
    expect(await rowsIn(oauthClients)).toBe(REGISTRATIONS_PER_HOUR);

    expect((await register(meta, "198.51.100.9")).status).toBe(201);
    h.clock.advance(3600_000);
    expect((await register(meta, "203.0.113.7")).status).toBe(201);
  });

  test("a client that never completed a grant is deleted 24 hours after registering; a client with a grant stays and keeps working", async () => {
    const g = await grant("dev");
    const unused = (await (await register({ client_name: "Never used", redirect_uris: ["https://unused.example/cb"] })).json()) as { client_id: string };
    const exists = async (id: string) => (await storedClient(id)) !== undefined;

    h.clock.advance(UNUSED_CLIENT_TTL_MS - 60_000);
    await runTask(h.deps, "oauth-client-expiry");
    expect(await exists(unused.client_id)).toBe(true);

    h.clock.advance(60_000);
    await runTask(h.deps, "oauth-client-expiry");
    expect(await exists(unused.client_id)).toBe(false);
    expect(await exists(g.client.client_id)).toBe(true);
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
    const filler = (clientId: string, createdAt: number) => ({ clientId, clientName: "Filler", redirectUris: "[]", metadata: "{}", createdAt });
    // One unused client past its 24 hours, the rest fresh.
    const rows = [filler("mcp_old", now - UNUSED_CLIENT_TTL_MS - 1), ...Array.from({ length: MAX_CLIENTS - 1 }, (_, i) => filler(`mcp_fill${i + 1}`, now))];
    // In slices: one statement's parameters are bounded (SQLite's limit, PostgreSQL's 65535).
    for (let i = 0; i < rows.length; i += 1000) await h.deps.db.insert(oauthClients).values(rows.slice(i, i + 1000));
    const clients = () => rowsIn(oauthClients);
    expect(await clients()).toBe(MAX_CLIENTS);

    const meta = { client_name: "Late", redirect_uris: ["https://late.example/cb"] };
    const admitted = await register(meta);
    expect(admitted.status).toBe(201);
    expect(await storedClient("mcp_old")).toBeUndefined();
    expect(await clients()).toBe(MAX_CLIENTS);

    const refused = await register(meta);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe(String(UNUSED_CLIENT_TTL_MS / 1000));
    const body = (await refused.json()) as { error: string; error_description: string };
    expect(body.error).toBe("temporarily_unavailable");
    expect(body.error_description).toContain(String(MAX_CLIENTS));
    expect(await clients()).toBe(MAX_CLIENTS);
  });
});

/** Registers straight at the endpoint, as a client's own code does; each call from its own address, so the hourly limit stays out of the way. */
let registrations = 0;
function registerRaw(clientMeta: unknown) {
  return h.request("POST", "/oauth/register", { body: clientMeta, ip: `198.18.${Math.floor(++registrations / 250)}.${registrations % 250}` });
}

const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

/** A signed-in browser through authorize and consent (Allow) for `clientId` and `redirect`: the code and where it was sent. */
async function codeVia(clientId: string, redirect: string, email: string, extra: Record<string, string> = {}, password = PASSWORD) {
  const verifier = randomBytes(32).toString("base64url");
  const url = new URL(`${BASE}/oauth/authorize`);
  const params = { response_type: "code", client_id: clientId, redirect_uri: redirect, code_challenge: s256(verifier), code_challenge_method: "S256", state: "st-1", ...extra };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const browser = new Browser();
  await signInVia(browser, url, email, password);
  const { page, answer } = await consent(browser, url, "allow");
  expect(answer.status).toBe(303);
  const sentTo = new URL(answer.location);
  return { page, location: answer.location, code: sentTo.searchParams.get("code")!, state: sentTo.searchParams.get("state"), verifier, browser, url };
}

describe("registrations shaped like the clients people use", () => {
  test("Cursor's cursor:// redirect and a one-word private-use scheme register and complete the flow; javascript:, data:, file:, vbscript:, about:, blob: and http off loopback are refused", async () => {
    const account = await accountWithPassword("dev", "cursor@example.com");
    for (const redirect of ["cursor://anysphere.cursor-mcp/oauth/callback", "cursor://callback"]) {
      const res = await registerRaw({ client_name: "Cursor", redirect_uris: [redirect], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" });
      expect([redirect, res.status]).toEqual([redirect, 201]);
      const client = (await res.json()) as { client_id: string; redirect_uris: string[] };
      expect(client.redirect_uris).toEqual([redirect]);

      const { page, location, code, verifier } = await codeVia(client.client_id, redirect, account.email);
      expect(page).toContain("sent to <strong>the app that opens cursor: links</strong>");
      expect(location.startsWith(`${redirect}?`)).toBe(true);
      const tokens = await tokenPost({ grant_type: "authorization_code", code, code_verifier: verifier, client_id: client.client_id, redirect_uri: redirect });
      expect(tokens.status).toBe(200);
      await expectMcpStatus(tokens.body.access_token as string, 200);
    }

    for (const redirect of ["javascript:alert(1)", "data:text/html,<b>x</b>", "file:///etc/passwd", "vbscript:msgbox", "about:blank", "blob:https://evil.example/123", "http://evil.example/cb", "JavaScript://x/%0aalert(1)"]) {
      const res = await registerRaw({ client_name: "Bad", redirect_uris: [redirect] });
      expect([redirect, res.status]).toEqual([redirect, 400]);
      expect(((await res.json()) as { error: string }).error).toBe("invalid_client_metadata");
    }
    expect(await rowsIn(oauthClients)).toBe(2);
  });

  test("a client registered with a port-less loopback redirect authorises on whatever port it listens on (RFC 8252 7.3); the path must match and the exchange names the redirect it used", async () => {
    const account = await accountWithPassword("dev", "vscode@example.com");
    const metadata = (await discoverAuthorizationServerMetadata(BASE))!;
    const client = await registerClient(BASE, { metadata, clientMetadata: { redirect_uris: ["http://127.0.0.1/callback"], client_name: "Editor" } });

    // The client's own callback listener, on a port the system picked.
    const received: URLSearchParams[] = [];
    const listener = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => (received.push(new URL(r.url).searchParams), new Response("done")) });
    try {
      const redirect = `http://127.0.0.1:${listener.port}/callback`;
      const { authorizationUrl, codeVerifier } = await startAuthorization(BASE, { metadata, clientInformation: client, redirectUrl: redirect, scope: "notes:read notes:write", state: "vs" });
      const browser = new Browser();
      await signInVia(browser, authorizationUrl, account.email);
      const { page, answer } = await consent(browser, authorizationUrl, "allow");
      expect(page).toContain(`sent back to <strong>an app on this computer</strong> (port ${listener.port})`);
      expect(new URL(answer.location).origin).toBe(`http://127.0.0.1:${listener.port}`);
      await (await fetch(answer.location)).text();
      const code = received[0]!.get("code")!;
      expect(received[0]!.get("state")).toBe("vs");

      // The exchange names the redirect the authorisation used, port and all.
      const portless = await tokenPost({ grant_type: "authorization_code", code, code_verifier: codeVerifier, client_id: client.client_id, redirect_uri: "http://127.0.0.1/callback" });
      expect(portless.body.error).toBe("invalid_grant");
      const tokens = await exchangeAuthorization(BASE, { metadata, clientInformation: client, authorizationCode: code, codeVerifier, redirectUri: redirect });
      const mcp = await mcpClient(tokens.access_token);
      expect((await mcp.callTool({ name: "list_notes", arguments: {} })).isError).toBeFalsy();

      // Any port, but the same host, path and query: otherwise an error page, never a redirect.
      for (const other of [`http://127.0.0.1:${listener.port}/other`, `http://localhost:${listener.port}/callback`, `http://[::1]:${listener.port}/callback`, `http://127.0.0.1:${listener.port}/callback?next=x`, `https://127.0.0.1:${listener.port}/callback`]) {
        const u = new URL(authorizationUrl);
        u.searchParams.set("redirect_uri", other);
        const refused = await browser.get(u);
        expect([other, refused.status, refused.location]).toEqual([other, 400, ""]);
      }
    } finally {
      listener.stop(true);
    }
  });

  test("a registration asking for client_secret_post is registered as a public client and the answer says so; unknown scopes such as offline_access are ignored when registering, authorising and refreshing", async () => {
    const account = await accountWithPassword("dev", "secretive@example.com");
    const res = await registerRaw({
      client_name: "Confidential",
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: "client_secret_post",
      grant_types: ["authorization_code", "refresh_token", "client_credentials"],
      scope: "notes:read offline_access",
    });
    expect(res.status).toBe(201);
    const client = (await res.json()) as Record<string, unknown>;
    expect(client.token_endpoint_auth_method).toBe("none");
    expect(client.client_secret).toBeUndefined();
    expect(client.grant_types).toEqual(["authorization_code", "refresh_token"]);
    expect(client.scope).toBe("notes:read");
    // client_secret_basic, through the SDK: it reads the answer and will send no secret.
    const metadata = (await discoverAuthorizationServerMetadata(BASE))!;
    const viaSdk = await registerClient(BASE, { metadata, clientMetadata: { redirect_uris: [REDIRECT], client_name: "Basic", token_endpoint_auth_method: "client_secret_basic" } });
    expect(viaSdk.token_endpoint_auth_method).toBe("none");
    expect(viaSdk.client_secret).toBeUndefined();

    const { page, code, verifier } = await codeVia(client.client_id as string, REDIRECT, account.email, { scope: "notes:read notes:write offline_access" });
    expect(page).not.toContain("<li>offline_access");
    const tokens = await tokenPost({ grant_type: "authorization_code", code, code_verifier: verifier, client_id: client.client_id as string, redirect_uri: REDIRECT });
    expect(tokens.status).toBe(200);
    expect(tokens.body.scope).toBe("notes:read notes:write");

    const narrowed = await tokenPost({ grant_type: "refresh_token", refresh_token: tokens.body.refresh_token as string, client_id: client.client_id as string, scope: "notes:read offline_access" });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.scope).toBe("notes:read");

    // Only unknown scopes: as if none was asked for, every scope the consent page names.
    const only = await codeVia(client.client_id as string, REDIRECT, account.email, { scope: "offline_access openid" });
    expect(only.page).toContain("read your notes and folders");
    const onlyTokens = await tokenPost({ grant_type: "authorization_code", code: only.code, code_verifier: only.verifier, client_id: client.client_id as string, redirect_uri: REDIRECT });
    expect(onlyTokens.body.scope).toBe("notes:read notes:write");
  });

  test("registration stores known fields only, each capped: a 3 MB registration is refused, over-long fields are cut or dropped, unknown ones never stored", async () => {
    const huge = await registerRaw({ client_name: "Huge", redirect_uris: [REDIRECT], client_uri: `https://huge.example/${"x".repeat(3 * 1024 * 1024)}` });
    expect(huge.status).toBe(400);
    expect(((await huge.json()) as { error: string }).error).toBe("invalid_client_metadata");
    expect(await rowsIn(oauthClients)).toBe(0);

    const res = await registerRaw({
      client_name: "N".repeat(500),
      redirect_uris: [REDIRECT],
      client_uri: `https://agent.example/${"x".repeat(1000)}`,
      logo_uri: "javascript:alert(1)",
      tos_uri: "https://agent.example/tos",
      contacts: Array.from({ length: 50 }, (_, i) => `ops${i}@agent.example`),
      software_id: "agent",
      software_version: "v".repeat(500),
      x_custom: "junk".repeat(1000),
      jwks: { keys: [{ kty: "RSA", n: "x".repeat(5000) }] },
    });
    expect(res.status).toBe(201);
    const answer = (await res.json()) as Record<string, unknown>;
    const row = (await storedClient(answer.client_id as string))!;
    const stored = JSON.parse(row.metadata) as Record<string, unknown>;
    for (const meta of [answer, stored]) {
      expect((meta.client_name as string).length).toBe(100);
      expect(meta.client_uri).toBeUndefined();
      expect(meta.logo_uri).toBeUndefined();
      expect(meta.tos_uri).toBe("https://agent.example/tos");
      expect((meta.contacts as string[]).length).toBe(5);
      expect(meta.software_id).toBe("agent");
      expect(meta.software_version).toBeUndefined();
      expect(meta.x_custom).toBeUndefined();
      expect(meta.jwks).toBeUndefined();
    }
    expect(row.client_name.length).toBe(100);
    expect(row.metadata.length).toBeLessThan(2048);

    const tooMany = await registerRaw({ client_name: "Many", redirect_uris: Array.from({ length: 11 }, (_, i) => `http://127.0.0.1:${4000 + i}/cb`) });
    expect(tooMany.status).toBe(400);
    const tooLong = await registerRaw({ client_name: "Long", redirect_uris: [`https://agent.example/${"x".repeat(3000)}`] });
    expect(tooLong.status).toBe(400);
    expect(await rowsIn(oauthClients)).toBe(1);
  });
});

describe("Client ID Metadata Documents", () => {
  /** A client's own web server, serving its metadata document (or whatever `answer` says). */
  function documentServer(answer: (url: string) => Response | Promise<Response>) {
    let fetches = 0;
    const srv = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => (fetches++, answer(r.url)) });
    return { url: `http://127.0.0.1:${srv.port}/oauth/client.json`, origin: `http://127.0.0.1:${srv.port}`, fetches: () => fetches, stop: () => srv.stop(true) };
  }

  test("a client whose client_id is its document's URL signs in end to end; the document is fetched once through the address guard and cached", async () => {
    const account = await accountWithPassword("dev", "cimd@example.com");
    const doc = documentServer((url) => Response.json({ client_id: url, client_name: "Doc Agent", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", x_extra: "ignored" }));
    try {
      const metadata = (await discoverAuthorizationServerMetadata(BASE))!;
      expect((metadata as OAuthMetadata & { client_id_metadata_document_supported?: boolean }).client_id_metadata_document_supported).toBe(true);

      // Loopback is not public: refused, and not even connected to, until the operator allows it.
      const refused = await new Browser().get(authorizeParams({ client_id: doc.url } as OAuthClientInformationFull, { code_challenge: s256("v".repeat(43)), code_challenge_method: "S256" }));
      expect(refused.status).toBe(400);
      expect(refused.text).toContain("not a public address");
      expect(doc.fetches()).toBe(0);

      // What NOTESTREAM_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8 sets.
      h.deps.config.webhookAllow = [parseCidr("127.0.0.0/8")];
      const clientInformation = { client_id: doc.url, redirect_uris: [REDIRECT] };
      const resource = new URL(`${BASE}/mcp`);
      const { authorizationUrl, codeVerifier } = await startAuthorization(BASE, { metadata, clientInformation, redirectUrl: REDIRECT, scope: "notes:read notes:write", state: "doc", resource });
      const browser = new Browser();
      await signInVia(browser, authorizationUrl, account.email);
      const { page, answer } = await consent(browser, authorizationUrl, "allow");
      expect(page).toContain('Allow Doc Agent <span class="muted">(unverified name)</span>?');
      expect(page).toContain(`described by a document at <strong>127.0.0.1:${new URL(doc.url).port}</strong>`);
      const code = new URL(answer.location).searchParams.get("code")!;
      const tokens = await exchangeAuthorization(BASE, { metadata, clientInformation, authorizationCode: code, codeVerifier, redirectUri: REDIRECT, resource });
      const mcp = await mcpClient(tokens.access_token);
      expect((await mcp.callTool({ name: "append_note", arguments: { filename: "doc.log", text: "signed in by document" } })).isError).toBeFalsy();
      const fresh = await refreshAuthorization(BASE, { metadata, clientInformation, refreshToken: tokens.refresh_token!, resource });
      await expectMcpStatus(fresh.access_token, 200);

      // Sign-in redirect, consent page and its answer: one fetch, the rest from the cache.
      expect(doc.fetches()).toBe(1);
      const stored = await storedClient(doc.url);
      expect(stored?.client_name).toBe("Doc Agent");
      expect(stored?.metadata).not.toContain("x_extra");
    } finally {
      doc.stop();
    }
  });

  test("documents that do not describe their own URL, or answer badly, slowly or too much, are refused with a page that says why, and never cached", async () => {
    const account = await accountWithPassword("dev", "cimd-bad@example.com");
    h.deps.config.webhookAllow = [parseCidr("127.0.0.0/8")];
    h.deps.config.webhookTimeoutMs = 300;
    let mode = "other-id";
    const doc = documentServer(async (url) => {
      if (mode === "other-id") return Response.json({ client_id: "https://someone-else.example/client.json", client_name: "Thief", redirect_uris: [REDIRECT] });
      if (mode === "redirect") return new Response(null, { status: 302, headers: { location: "https://elsewhere.example/client.json" } });
      if (mode === "missing") return new Response("no", { status: 404 });
      if (mode === "html") return new Response("<html></html>", { headers: { "content-type": "text/html" } });
      if (mode === "big") return Response.json({ client_id: url, client_name: "Big", redirect_uris: [REDIRECT], padding: "x".repeat(20_000) });
      if (mode === "slow") await Bun.sleep(2000);
      if (mode === "secret") return Response.json({ client_id: url, client_name: "Confidential", redirect_uris: [REDIRECT], token_endpoint_auth_method: "client_secret_basic" });
      return Response.json({ client_id: url, client_name: "Good", redirect_uris: [REDIRECT] });
    });
    try {
      const visit = (clientId: string, redirect = REDIRECT) =>
        new Browser().get(authorizeParams({ client_id: clientId } as OAuthClientInformationFull, { redirect_uri: redirect, code_challenge: s256("v".repeat(43)), code_challenge_method: "S256" }));
      const expectRefused = async (clientId: string, words: string) => {
        const res = await visit(clientId);
        expect([clientId, res.status, res.location]).toEqual([clientId, 400, ""]);
        expect(res.text).toContain(words);
      };
      await expectRefused(doc.url, "does not name its own URL");
      mode = "redirect";
      await expectRefused(doc.url, "answered 302");
      mode = "missing";
      await expectRefused(doc.url, "answered 404");
      mode = "html";
      await expectRefused(doc.url, "not JSON");
      mode = "big";
      await expectRefused(doc.url, "larger than");
      mode = "slow";
      const started = performance.now();
      await expectRefused(doc.url, "no answer within");
      expect(performance.now() - started).toBeLessThan(1500);
      mode = "secret";
      await expectRefused(doc.url, "public clients");
      // Not https, on an address nobody allowed; a root path; a fragment: refused before any connection.
      const before = doc.fetches();
      await expectRefused("http://93.184.215.14/client.json", "https");
      await expectRefused(`${doc.origin}/`, "path");
      await expectRefused(`${doc.url}#x`, "fragment");
      expect(doc.fetches()).toBe(before);
      expect(await rowsIn(oauthClients)).toBe(0);

      // A good document now: nothing bad was cached.
      mode = "good";
      const { code, verifier } = await codeVia(doc.url, REDIRECT, account.email);
      expect((await tokenPost({ grant_type: "authorization_code", code, code_verifier: verifier, client_id: doc.url, redirect_uri: REDIRECT })).status).toBe(200);
      // A redirect the document does not list is refused like any unregistered one.
      const elsewhere = await visit(doc.url, "https://evil.example/cb");
      expect(elsewhere.status).toBe(400);
      expect(elsewhere.text).toContain("Bad redirect");
    } finally {
      doc.stop();
    }
  });
});

describe("resource indicators and refresh races", () => {
  test("the token endpoint answers invalid_target for a resource other than this server's /mcp, or other than the one the code was issued for (RFC 8707)", async () => {
    const account = await accountWithPassword("dev", "target@example.com");
    const { metadata, client } = await discoverAndRegister();
    const { code, verifier } = await codeVia(client.client_id, REDIRECT, account.email, { resource: `${BASE}/mcp` });
    const exchange = (resource?: string) =>
      tokenPost({ grant_type: "authorization_code", code, code_verifier: verifier, client_id: client.client_id, redirect_uri: REDIRECT, ...(resource ? { resource } : {}) });

    const evil = await exchange("https://evil.example/mcp");
    expect(evil.status).toBe(400);
    expect(evil.body.error).toBe("invalid_target");
    // This server, but not what the code was issued for.
    expect((await exchange(BASE)).body.error).toBe("invalid_target");
    expect(await rowsIn(oauthTokens)).toBe(0);
    // The refusals did not use the code up.
    const ok = await exchange(`${BASE}/mcp`);
    expect(ok.status).toBe(200);

    const refresh = (resource: string) => tokenPost({ grant_type: "refresh_token", refresh_token: ok.body.refresh_token as string, client_id: client.client_id, resource });
    const evilRefresh = await refresh("https://evil.example/mcp");
    expect(evilRefresh.body.error).toBe("invalid_target");
    const viaSdk = await refreshAuthorization(BASE, { metadata, clientInformation: client, refreshToken: ok.body.refresh_token as string, resource: new URL(`${BASE}/mcp`) });
    await expectMcpStatus(viaSdk.access_token, 200);
  });

  test(`two refreshes of one refresh token at once both succeed with the same new pair; within ${REFRESH_GRACE_MS / 1000} s a repeat gets it again, after that it ends the grant`, async () => {
    const g = await grant("dev");
    const form = { grant_type: "refresh_token", refresh_token: g.tokens.refresh_token!, client_id: g.client.client_id };
    const [a, b] = await Promise.all([tokenPost(form), tokenPost(form)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body.access_token).toBe(a.body.access_token as string);
    expect(b.body.refresh_token).toBe(a.body.refresh_token as string);
    expect(a.body.refresh_token).not.toBe(g.tokens.refresh_token);
    await expectMcpStatus(a.body.access_token as string, 200);
    await expectMcpStatus(g.tokens.access_token, 401);

    h.clock.advance(REFRESH_GRACE_MS - 1000);
    const late = await tokenPost(form);
    expect(late.status).toBe(200);
    expect(late.body.refresh_token).toBe(a.body.refresh_token as string);
    expect(late.body.expires_in).toBeLessThanOrEqual(3600);

    h.clock.advance(2000);
    const replay = await tokenPost(form);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid_grant");
    await expectMcpStatus(a.body.access_token as string, 401);
    expect((await tokenPost({ ...form, refresh_token: a.body.refresh_token as string })).body.error).toBe("invalid_grant");
  });

  test("within the grace window a revoked grant stays revoked: the old refresh token gets nothing", async () => {
    const g = await grant("dev");
    const form = { grant_type: "refresh_token", refresh_token: g.tokens.refresh_token!, client_id: g.client.client_id };
    const rotated = await tokenPost(form);
    const revoke = await fetch(`${BASE}/oauth/revoke`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ token: rotated.body.refresh_token as string }).toString() });
    expect(revoke.status).toBe(200);
    const again = await tokenPost(form);
    expect(again.body.error).toBe("invalid_grant");
    await expectMcpStatus(rotated.body.access_token as string, 401);
  });
});

describe("grants: listed, revoked, and ended by a new password", () => {
  /** Runs a CLI command's function as main.ts does, collecting stdout and stderr lines. */
  async function cli(run: typeof oauthList, argv: string[]) {
    const out: string[] = [];
    const info: string[] = [];
    await run(h.deps, argv, { out: (l) => out.push(l), info: (l) => info.push(l) });
    return { out, info };
  }

  /** A second client allowed by the same account, through the whole flow. */
  async function secondGrant(email: string, name: string, password = PASSWORD) {
    const res = await registerRaw({ client_name: name, redirect_uris: ["cursor://anysphere.cursor-mcp/oauth/callback"] });
    const { client_id } = (await res.json()) as { client_id: string };
    const { code, verifier } = await codeVia(client_id, "cursor://anysphere.cursor-mcp/oauth/callback", email, { scope: "notes:read" }, password);
    const tokens = await tokenPost({ grant_type: "authorization_code", code, code_verifier: verifier, client_id, redirect_uri: "cursor://anysphere.cursor-mcp/oauth/callback" });
    return tokens.body as { access_token: string; refresh_token: string };
  }

  test("notestream oauth list prints one line per grant (id, client name, scopes, last use); oauth revoke --id ends one, --email --all the rest", async () => {
    const g = await grant("dev", "cli-grants@example.com");
    const cursor = await secondGrant(g.account.email, "Cursor");
    const before = await cli(oauthList, ["--email", g.account.email]);
    expect(before.out.length).toBe(2);
    const rows = before.out.map((l) => l.split("\t"));
    expect(rows.map((r) => r.slice(1).join(" | ")).sort()).toEqual(["Cursor | notes:read | never", "Test Agent | notes:read notes:write | never"]);
    expect(new Set(rows.map((r) => r[0])).size).toBe(2);
    // Used once through /mcp: the last use is that moment.
    await expectMcpStatus(g.tokens.access_token, 200);
    await h.settle();
    const used = (await cli(oauthList, ["--email", g.account.email])).out.map((l) => l.split("\t")).find((r) => r[1] === "Test Agent")!;
    expect(used[3]).toBe(new Date(h.clock.now()).toISOString());

    const agentId = used[0]!;
    const revoked = await cli(oauthRevoke, ["--id", agentId]);
    expect(revoked.out).toEqual([agentId]);
    expect(revoked.info[0]).toContain("Test Agent");
    await expectMcpStatus(g.tokens.access_token, 401);
    expect((await tokenPost({ grant_type: "refresh_token", refresh_token: g.tokens.refresh_token!, client_id: g.client.client_id })).body.error).toBe("invalid_grant");
    await expectMcpStatus(cursor.access_token, 200);
    expect((await cli(oauthList, ["--email", g.account.email])).out.map((l) => l.split("\t")[1])).toEqual(["Cursor"]);

    await expect(cli(oauthRevoke, ["--id", agentId])).rejects.toMatchObject({ code: "not_found" });
    await expect(cli(oauthRevoke, ["--all"])).rejects.toBeInstanceOf(UsageError);
    await expect(cli(oauthRevoke, ["--id", agentId, "--email", g.account.email, "--all"])).rejects.toBeInstanceOf(UsageError);
    await expect(cli(oauthList, ["--email", "nobody@example.com"])).rejects.toMatchObject({ code: "not_found" });

    const all = await cli(oauthRevoke, ["--email", g.account.email, "--all"]);
    expect(all.out).toEqual(["1"]);
    await expectMcpStatus(cursor.access_token, 401);
    expect((await cli(oauthList, ["--email", g.account.email])).out).toEqual([]);
  });

  test("the Connected apps page revokes only the signed-in account's grants: another account's grant id is refused and keeps working", async () => {
    const mine = await grant("dev", "apps-mine@example.com");
    const theirs = await grant("dev", "apps-theirs@example.com");
    const theirId = (await cli(oauthList, ["--email", theirs.account.email])).out[0]!.split("\t")[0]!;
    const page = await mine.browser.get("/settings/apps");
    expect(page.status).toBe(200);
    expect(page.text).toContain("Test Agent");
    expect(page.text).toContain("(unverified name)");
    expect(page.text).not.toContain(theirId);
    const refused = await mine.browser.post(`/settings/apps/${theirId}/revoke`, { _csrf: hiddenFields(page.text)._csrf! });
    expect(refused.status).toBe(303);
    expect(decodeURIComponent(refused.location)).toContain("error=");
    await expectMcpStatus(theirs.tokens.access_token, 200);
    // Without the CSRF token, not even one's own.
    const myId = (await cli(oauthList, ["--email", mine.account.email])).out[0]!.split("\t")[0]!;
    expect((await mine.browser.post(`/settings/apps/${myId}/revoke`, {})).status).toBe(403);
    await expectMcpStatus(mine.tokens.access_token, 200);
  });

  test("a password reset ends every grant; so does a password change", async () => {
    const sent: { to: string; subject: string; text: string }[] = [];
    h.deps.mailer = { send: async (m) => void sent.push(m) };
    const g = await grant("dev", "reset-grants@example.com");
    const other = await secondGrant(g.account.email, "Cursor");
    await expectMcpStatus(g.tokens.access_token, 200);

    const browser = new Browser();
    const form = await browser.get("/reset");
    expect((await browser.post("/reset", { _csrf: hiddenFields(form.text)._csrf!, email: g.account.email })).status).toBe(303);
    await h.jobs.drain();
    const token = /token=(\w+)/.exec(sent.find((m) => m.subject.includes("reset"))!.text)![1]!;
    const confirm = await browser.get(`/reset/confirm?token=${token}`);
    const done = await browser.post("/reset/confirm", { ...hiddenFields(confirm.text), password: "N3w!password" });
    expect(done.status).toBe(303);
    for (const access of [g.tokens.access_token, other.access_token]) await expectMcpStatus(access, 401);
    expect((await tokenPost({ grant_type: "refresh_token", refresh_token: g.tokens.refresh_token!, client_id: g.client.client_id })).body.error).toBe("invalid_grant");
    expect((await cli(oauthList, ["--email", g.account.email])).out).toEqual([]);

    // A new grant, then a password change from the account page (signed in with the new password).
    const again = await secondGrant(g.account.email, "Cursor again", "N3w!password");
    await expectMcpStatus(again.access_token, 200);
    const settings = await browser.get("/settings");
    expect(settings.status).toBe(200);
    const changed = await browser.post("/settings/password", { _csrf: hiddenFields(settings.text)._csrf!, current_password: "N3w!password", new_password: "An0ther!pass" });
    expect(changed.status).toBe(303);
    expect(decodeURIComponent(changed.location)).toContain("ok=");
    await expectMcpStatus(again.access_token, 401);
  });
});
