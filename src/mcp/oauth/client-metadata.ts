import { acceptableRedirect, MAX_REDIRECT_LENGTH } from "../../modules/oauth/redirects";
import { knownScope } from "../../modules/oauth/scopes";

/**
 * What a client says about itself, from a registration (RFC 7591) or a metadata document, as it is
 * kept: the fields this server knows, each capped. Anyone may register, so nothing else is stored;
 * RFC 7591 3.2.1 lets the server replace what it will not honour, and the answer shows what it kept.
 */
export interface ClientMetadata {
  client_name: string;
  redirect_uris: string[];
  client_uri?: string;
  logo_uri?: string;
  tos_uri?: string;
  policy_uri?: string;
  contacts?: string[];
  software_id?: string;
  software_version?: string;
  scope?: string;
  grant_types: string[];
  response_types: string[];
  /** Always none: public clients with PKCE; a request for a secret method is registered as public. */
  token_endpoint_auth_method: "none";
}

export const MAX_REDIRECT_URIS = 10;
export const MAX_NAME_LENGTH = 100;
const MAX_URL_FIELD_LENGTH = 500;
const MAX_CONTACTS = 5;
const MAX_CONTACT_LENGTH = 100;
const URL_FIELDS = ["client_uri", "logo_uri", "tos_uri", "policy_uri"] as const;
const TEXT_FIELDS = { software_id: 100, software_version: 50 } as const;

export const DEFAULT_CLIENT_NAME = "An MCP client";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A name as a person will read it: no control or formatting characters (bidi overrides), trimmed, capped. */
export function cleanClientName(raw: unknown): string {
  const name = typeof raw === "string" ? raw.replace(/[\p{Cc}\p{Cf}]/gu, "").trim().slice(0, MAX_NAME_LENGTH) : "";
  return name || DEFAULT_CLIENT_NAME;
}

function httpsUrl(raw: unknown): string | undefined {
  if (typeof raw !== "string" || raw.length > MAX_URL_FIELD_LENGTH) return undefined;
  try {
    return new URL(raw).protocol === "https:" ? raw : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The metadata to keep, or why the client cannot be used. Only redirect URIs refuse a client
 * (without them no code can be delivered safely); other fields over their cap or malformed are
 * left out, and the name is cut to 100 characters.
 */
export function clientMetadataFrom(input: unknown): { metadata: ClientMetadata } | { problem: string } {
  if (!isRecord(input)) return { problem: "the client metadata must be a JSON object" };
  const uris = input.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || !uris.every((u) => typeof u === "string")) return { problem: "redirect_uris must be a non-empty array of URIs" };
  if (uris.length > MAX_REDIRECT_URIS) return { problem: `at most ${MAX_REDIRECT_URIS} redirect_uris` };
  const bad = (uris as string[]).find((u) => !acceptableRedirect(u));
  if (bad !== undefined) {
    return {
      problem: `redirect_uris must be https URLs, http URLs on a loopback address, or an app's own scheme (not javascript:, data:, file: and the like), without a fragment, at most ${MAX_REDIRECT_LENGTH} characters`,
    };
  }
  const metadata: ClientMetadata = {
    client_name: cleanClientName(input.client_name),
    redirect_uris: [...new Set(uris as string[])],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
  for (const field of URL_FIELDS) {
    const url = httpsUrl(input[field]);
    if (url) metadata[field] = url;
  }
  for (const [field, cap] of Object.entries(TEXT_FIELDS) as [keyof typeof TEXT_FIELDS, number][]) {
    const value = input[field];
    if (typeof value === "string" && value.length > 0 && value.length <= cap) metadata[field] = value;
  }
  if (Array.isArray(input.contacts)) {
    const contacts = input.contacts.filter((c): c is string => typeof c === "string" && c.length > 0 && c.length <= MAX_CONTACT_LENGTH).slice(0, MAX_CONTACTS);
    if (contacts.length) metadata.contacts = contacts;
  }
  const scope = knownScope(input.scope);
  if (scope) metadata.scope = scope;
  return { metadata };
}
