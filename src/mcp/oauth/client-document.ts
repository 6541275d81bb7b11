import http from "node:http";
import https from "node:https";
import type { Deps } from "../../deps";
import { inCidr, parseIp } from "../../lib/ip";
import { pinnedRequest } from "../../modules/webhooks/http";
import { checkedAddress, RefusedTarget } from "../../modules/webhooks/target";
import { findClient, storeDocumentClient, type OAuthClient } from "../../modules/oauth/clients";
import { clientMetadataFrom } from "./client-metadata";

/**
 * Client ID Metadata Documents (the MCP 2025-11-25 authorization specification's recommended way
 * for a client to introduce itself): the client_id is an https URL, and the JSON document there
 * is the client's registration. Anyone can make this server fetch a URL by naming it as a
 * client_id, so the fetch goes through the webhooks' address guard (no private, loopback or
 * metadata addresses, the checked address pinned so a second lookup cannot swap it), follows no
 * redirect, reads at most 5 KB (the draft's recommendation) within a few seconds, and is counted
 * per address. A good document is kept as the client's row for an hour; a bad answer is never kept.
 */
export const DOCUMENT_MAX_BYTES = 5 * 1024;
export const DOCUMENT_TIMEOUT_MS = 5_000;
export const DOCUMENT_CACHE_MS = 3600_000;
export const DOCUMENT_FETCHES_PER_HOUR = 30;

/** Why a document cannot stand for its client; the message is shown on the authorize error page. */
export class DocumentRefused extends Error {}

/** The client a document describes: from the cache when fresh, else fetched, checked and stored. */
export async function documentClient(deps: Deps, clientId: string, ip: string): Promise<OAuthClient> {
  const url = documentUrl(clientId);
  const cached = await findClient(deps, clientId);
  if (cached?.documentFetchedAt != null && cached.documentFetchedAt > deps.clock.now() - DOCUMENT_CACHE_MS) return cached;
  const rate = await deps.limiter.consume(`oauth:document:${ip}`, DOCUMENT_FETCHES_PER_HOUR, "anonymous", 3600_000);
  if (!rate.allowed) throw new DocumentRefused(`this address asked for more than ${DOCUMENT_FETCHES_PER_HOUR} client documents in an hour; try again later`);
  const document = await fetchDocument(deps, url);
  if (document.client_id !== clientId) throw new DocumentRefused("the document does not name its own URL as its client_id");
  // The draft forbids shared-secret methods in a document, and this server verifies no client keys:
  // a document asking for either describes a client this server cannot authenticate as it expects.
  if (document.token_endpoint_auth_method !== undefined && document.token_endpoint_auth_method !== "none") {
    throw new DocumentRefused("only public clients (token_endpoint_auth_method none, with PKCE) are supported");
  }
  const kept = clientMetadataFrom(document);
  if ("problem" in kept) throw new DocumentRefused(kept.problem);
  const meta = kept.metadata;
  const row = { clientId, clientName: meta.client_name, redirectUris: JSON.stringify(meta.redirect_uris), metadata: JSON.stringify({ ...meta, client_id: clientId }) };
  const stored = await deps.writer.write(async () => {
    const r = await storeDocumentClient(deps, { ...row, documentFetchedAt: deps.clock.now() });
    return r.stored ? (await findClient(deps, clientId))! : null;
  });
  if (!stored) throw new DocumentRefused("this server holds its maximum of registered clients; try again later");
  return stored;
}

/** The rules of the draft for the URL itself, before anything is connected to. */
function documentUrl(clientId: string): URL {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new DocumentRefused("the client_id is not a URL");
  }
  if (clientId.includes("#")) throw new DocumentRefused("the client_id must not have a fragment");
  if (url.username || url.password) throw new DocumentRefused("the client_id must not carry a user name or password");
  if (url.pathname === "/") throw new DocumentRefused("the client_id must have a path (the document's, not the site's root)");
  // The document must name this exact string, and dot segments or another spelling would let two
  // strings stand for one document.
  if (url.href !== clientId) throw new DocumentRefused("the client_id must be written in normal form (lower-case scheme and host, no dot segments)");
  return url;
}

async function fetchDocument(deps: Deps, url: URL): Promise<Record<string, unknown>> {
  let target: { address: string; family: 4 | 6 };
  try {
    target = await checkedAddress(deps, url);
  } catch (e) {
    if (e instanceof RefusedTarget) throw new DocumentRefused(e.message);
    throw e;
  }
  // https, as the specification requires; plain http only to ranges the operator opened for
  // webhooks (NOTESTREAM_WEBHOOK_ALLOW_CIDRS: a homelab, or a test's loopback server).
  if (url.protocol !== "https:") {
    const ip = parseIp(target.address);
    if (url.protocol !== "http:" || !ip || !deps.config.webhookAllow.some((c) => inCidr(ip, c))) {
      throw new DocumentRefused("the client_id must be an https URL");
    }
  }
  const answer = await getCapped(url, target, Math.min(DOCUMENT_TIMEOUT_MS, deps.config.webhookTimeoutMs));
  if (answer.status !== 200) throw new DocumentRefused(`the document's server answered ${answer.status}, not 200`);
  if (!/^application\/([\w.-]+\+)?json\s*(;|$)/i.test(answer.contentType)) throw new DocumentRefused("the document is not JSON (Content-Type application/json)");
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    throw new DocumentRefused("the document is not JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new DocumentRefused("the document is not a JSON object");
  return parsed as Record<string, unknown>;
}

/**
 * GETs `url` but connects to `target` (checked beforehand), keeping the name for the Host header
 * and TLS; no redirects; refuses past DOCUMENT_MAX_BYTES or `timeoutMs`.
 */
function getCapped(url: URL, target: { address: string; family: 4 | 6 }, timeoutMs: number): Promise<{ status: number; contentType: string; body: string }> {
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(new DocumentRefused(message));
    };
    const req = client.request(
      pinnedRequest(url, target, "GET", { accept: "application/json", "user-agent": "notestream (OAuth client metadata)" }),
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > DOCUMENT_MAX_BYTES) return fail(`the document is larger than ${DOCUMENT_MAX_BYTES / 1024} KB`);
          chunks.push(c);
        });
        res.on("end", () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, contentType: String(res.headers["content-type"] ?? ""), body: Buffer.concat(chunks).toString("utf8") });
        });
        res.on("error", () => fail("the document's server broke off its answer"));
      },
    );
    const timer = setTimeout(() => fail(`no answer within ${timeoutMs} ms`), timeoutMs);
    req.on("error", (e) => fail(`could not fetch the document (${e.message.replace(target.address, url.hostname)})`));
    req.end();
  });
}
