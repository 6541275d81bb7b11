// The authorization codes and client lookups of the authorize and token endpoints. Registration
// (clients.ts) and the tokens themselves (tokens.ts) keep their queries beside their rules.
import { eq } from "drizzle-orm";
import type { Deps } from "../../deps";
import { oauthClients, oauthCodes } from "../../db/schema";

export type OAuthClient = typeof oauthClients.$inferSelect;
export type OAuthCode = typeof oauthCodes.$inferSelect;

export function findClient(deps: Deps, clientId: string): OAuthClient | undefined {
  return deps.db.select().from(oauthClients).where(eq(oauthClients.clientId, clientId)).get();
}

/** Stores an authorization code by its hash; inside the writer. */
export function storeCode(deps: Deps, code: typeof oauthCodes.$inferInsert): void {
  deps.db.insert(oauthCodes).values(code).run();
}

export function findCode(deps: Deps, codeHash: string): OAuthCode | undefined {
  return deps.db.select().from(oauthCodes).where(eq(oauthCodes.codeHash, codeHash)).get();
}

/** A code is exchanged once; the mark is what makes a second exchange a replay. Inside the writer. */
export function markCodeUsed(deps: Deps, codeHash: string): void {
  deps.db.update(oauthCodes).set({ usedAt: deps.clock.now() }).where(eq(oauthCodes.codeHash, codeHash)).run();
}
