// The authorization codes of the authorize and token endpoints. Clients (clients.ts) and the
// tokens themselves (tokens.ts) keep their queries beside their rules.
import { eq } from "drizzle-orm";
import type { Deps } from "../../deps";
import { oauthCodes } from "../../db/tables";

export type OAuthCode = typeof oauthCodes.$inferSelect;

/** Stores an authorization code by its hash; inside the writer. */
export async function storeCode(deps: Deps, code: typeof oauthCodes.$inferInsert): Promise<void> {
  await deps.db.insert(oauthCodes).values(code);
}

export async function findCode(deps: Deps, codeHash: string): Promise<OAuthCode | undefined> {
  const [code] = await deps.db.select().from(oauthCodes).where(eq(oauthCodes.codeHash, codeHash));
  return code;
}

/** A code is exchanged once; the mark is what makes a second exchange a replay. Inside the writer. */
export async function markCodeUsed(deps: Deps, codeHash: string): Promise<void> {
  await deps.db.update(oauthCodes).set({ usedAt: deps.clock.now() }).where(eq(oauthCodes.codeHash, codeHash));
}
