import type { Scope } from "../../principal";

/** The scopes an OAuth client may ask for. */
export const OAUTH_SCOPES = ["notes:read", "notes:write"] as const;

/** What each scope allows, in the words of the consent and Connected apps pages. */
export const SCOPE_TEXT: Record<string, string> = {
  "notes:read": "read your notes and folders",
  "notes:write": "create, edit, append to, move and delete your notes and folders",
};

/**
 * The scopes of `raw` this server issues, in its own order; undefined when none. Scopes it does not
 * know (`offline_access`, `openid`) are ignored rather than refused, as RFC 6749 3.3 allows: clients
 * add them out of habit, and refusing made them fail to connect at all.
 */
export function knownScope(raw: unknown): string | undefined {
  if (typeof raw !== "string") return undefined;
  const asked = new Set(raw.split(/\s+/));
  const known = OAUTH_SCOPES.filter((s) => asked.has(s));
  return known.length ? known.join(" ") : undefined;
}

/** The scope a request gets: the known ones it names, or all of them when it names none we know. */
export function normaliseScope(requested: string | undefined): string {
  return knownScope(requested) ?? OAUTH_SCOPES.join(" ");
}

/** OAuth scopes as the token scopes of API.md: notes:write covers create, edit, delete, move and append. */
export function toScopes(scope: string): Set<Scope> {
  const s = new Set<Scope>();
  for (const part of scope.split(" ")) {
    if (part === "notes:read") s.add("read");
    if (part === "notes:write") {
      s.add("write");
      s.add("append");
    }
  }
  return s;
}
