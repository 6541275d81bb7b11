import { and, count, eq, gt, lte, min, notInArray } from "drizzle-orm";
import type { Deps } from "../../deps";
import { mayNameRow } from "../../db/keys";
import { oauthClients, oauthCodes, oauthTokens } from "../../db/tables";

export type OAuthClient = typeof oauthClients.$inferSelect;

/** A client_id that names a metadata document rather than a registration (those are `mcp_…`). */
export function isDocumentClientId(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

export async function findClient(deps: Deps, clientId: string): Promise<OAuthClient | undefined> {
  if (!mayNameRow(clientId)) return undefined;
  const [client] = await deps.db.select().from(oauthClients).where(eq(oauthClients.clientId, clientId));
  return client;
}

/**
 * Dynamic registration is open to anyone, so what it stores is bounded: a rate per address, a cap
 * on the table, and registrations that never led to a grant do not outlive a day.
 */
export const REGISTRATIONS_PER_HOUR = 10;
export const MAX_CLIENTS = 10_000;
export const UNUSED_CLIENT_TTL_MS = 24 * 3600_000;
const HOUR_MS = 3600_000;

/** Counts one registration attempt from `ip`; past the limit, the seconds until the next one is allowed. */
export async function registrationRetryAfter(deps: Deps, ip: string): Promise<number | null> {
  const d = await deps.limiter.consume(`oauth:register:${ip}`, REGISTRATIONS_PER_HOUR, "anonymous", HOUR_MS);
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
export async function expireUnusedClients(deps: Deps): Promise<void> {
  await deps.db.delete(oauthClients).where(unusedSince(deps, deps.clock.now() - UNUSED_CLIENT_TTL_MS));
}

export type NewClient = Omit<typeof oauthClients.$inferInsert, "createdAt">;

/**
 * Stores a registration unless the table is full even after expiring unused clients; then the
 * seconds until the oldest unused one expires (null when every client has a grant). Inside the
 * writer, so the count and the insert see the same table.
 */
export async function storeClient(deps: Deps, client: NewClient): Promise<{ stored: true } | { stored: false; retryAfter: number | null }> {
  const now = deps.clock.now();
  const total = async () => {
    const [row] = await deps.db.select({ n: count() }).from(oauthClients);
    return row!.n;
  };
  if ((await total()) >= MAX_CLIENTS) await expireUnusedClients(deps);
  if ((await total()) >= MAX_CLIENTS) {
    const [row] = await deps.db.select({ at: min(oauthClients.createdAt) }).from(oauthClients).where(unusedSince(deps, now));
    const oldest = row?.at;
    return { stored: false, retryAfter: oldest == null ? null : Math.max(1, Math.ceil((oldest + UNUSED_CLIENT_TTL_MS - now) / 1000)) };
  }
  await deps.db.insert(oauthClients).values({ ...client, createdAt: now });
  return { stored: true };
}

/**
 * A client known by its metadata document: a new one is stored like a registration (the same cap),
 * a known one gets the document's current name, redirects and metadata. Inside the writer.
 */
export async function storeDocumentClient(deps: Deps, client: NewClient): ReturnType<typeof storeClient> {
  const [known] = await deps.db.select({ id: oauthClients.clientId }).from(oauthClients).where(eq(oauthClients.clientId, client.clientId));
  if (!known) return storeClient(deps, client);
  await deps.db.update(oauthClients).set(client).where(eq(oauthClients.clientId, client.clientId));
  return { stored: true };
}
