import { and, count, gt, lte, min, notInArray } from "drizzle-orm";
import type { Deps } from "../../deps";
import { oauthClients, oauthCodes, oauthTokens } from "../../db/schema";

/**
 * Dynamic registration is open to anyone, so what it stores is bounded: a rate per address, a cap
 * on the table, and registrations that never led to a grant do not outlive a day.
 */
export const REGISTRATIONS_PER_HOUR = 10;
export const MAX_CLIENTS = 10_000;
export const UNUSED_CLIENT_TTL_MS = 24 * 3600_000;
const HOUR_MS = 3600_000;

const LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]"];

export function isLoopbackRedirect(u: URL): boolean {
  return u.protocol === "http:" && LOOPBACK_HOSTS.includes(u.hostname);
}

/** A private-use scheme (RFC 8252 7.1) must be reverse-domain, so it names its app: `com.example.app:`. */
export function isPrivateUseRedirect(u: URL): boolean {
  return /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(u.protocol);
}

/** Redirect URIs a public client may use: https, http on a loopback address, or a private-use scheme (native apps). */
export function acceptableRedirect(uri: string): boolean {
  try {
    const u = new URL(uri);
    if (u.hash) return false;
    return u.protocol === "https:" || isLoopbackRedirect(u) || isPrivateUseRedirect(u);
  } catch {
    return false;
  }
}

/** Counts one registration attempt from `ip`; past the limit, the seconds until the next one is allowed. */
export function registrationRetryAfter(deps: Deps, ip: string): number | null {
  const d = deps.limiter.consume(`oauth:register:${ip}`, REGISTRATIONS_PER_HOUR, "anonymous", HOUR_MS);
  return d.allowed ? null : Math.max(1, Math.ceil(d.reset - deps.clock.now() / 1000));
}

/**
 * Unused: no token was ever minted for the client and no code of it is still waiting to be
 * exchanged. Tokens are revoked or expire but are never deleted (unless their account is), so a client that completed a
 * grant keeps its rows there; an expired code alone is a consent that never became a grant.
 */
function unusedSince(deps: Deps, cutoff: number) {
  const now = deps.clock.now();
  return and(
    lte(oauthClients.createdAt, cutoff),
    notInArray(oauthClients.clientId, deps.db.select({ id: oauthTokens.clientId }).from(oauthTokens)),
    notInArray(oauthClients.clientId, deps.db.select({ id: oauthCodes.clientId }).from(oauthCodes).where(gt(oauthCodes.expiresAt, now))),
  );
}

/** Deletes clients unused a day after registering (their expired codes go with them); run inside the writer. */
export function expireUnusedClients(deps: Deps): void {
  deps.db.delete(oauthClients).where(unusedSince(deps, deps.clock.now() - UNUSED_CLIENT_TTL_MS)).run();
}

export type NewClient = Omit<typeof oauthClients.$inferInsert, "createdAt">;

/**
 * Stores a registration unless the table is full even after expiring unused clients; then the
 * seconds until the oldest unused one expires (null when every client has a grant). Inside the
 * writer, so the count and the insert see the same table.
 */
export function storeClient(deps: Deps, client: NewClient): { stored: true } | { stored: false; retryAfter: number | null } {
  const now = deps.clock.now();
  const total = () => deps.db.select({ n: count() }).from(oauthClients).get()!.n;
  if (total() >= MAX_CLIENTS) expireUnusedClients(deps);
  if (total() >= MAX_CLIENTS) {
    const oldest = deps.db.select({ at: min(oauthClients.createdAt) }).from(oauthClients).where(unusedSince(deps, now)).get()?.at;
    return { stored: false, retryAfter: oldest == null ? null : Math.max(1, Math.ceil((oldest + UNUSED_CLIENT_TTL_MS - now) / 1000)) };
  }
  deps.db.insert(oauthClients).values({ ...client, createdAt: now }).run();
  return { stored: true };
}
