import { and, eq, isNull } from "drizzle-orm";
import type { Ctx, Deps } from "../../deps";
import { accounts } from "../../db/tables";
import { AppError } from "../../http/errors";
import { createStream } from "../streams/create";
import { mintToken } from "../tokens/service";
import { getWorkspace, tierOf } from "../workspaces/repo";
import { startTrial } from "./lifecycle";

export type UsageMode = "browser" | "code";

/** The stream code mode makes, and names in the snippets it shows. */
export const FIRST_STREAM = "first-stream.log";

/**
 * True once per account: at the first sign-in, which then lands on the onboarding. Marked at
 * once, so a person who walks away from it is not sent back there at every sign-in.
 */
export async function takeOnboarding(deps: Deps, accountId: string): Promise<boolean> {
  return deps.writer.write(
    async () =>
      (
        await deps.db
          .update(accounts)
          .set({ onboardedAt: deps.clock.now() })
          .where(and(eq(accounts.id, accountId), isNull(accounts.onboardedAt)))
          .returning({ id: accounts.id })
      ).length > 0,
  );
}

/** Inside a write. */
export async function setUsageMode(deps: Deps, accountId: string, mode: UsageMode): Promise<void> {
  await deps.db.update(accounts).set({ usageMode: mode, onboardedAt: deps.clock.now() }).where(eq(accounts.id, accountId));
}

export interface CodeModeStart {
  trialStarted: boolean;
  streamId: string;
  filename: string;
  token: string;
}

/**
 * Code mode, in one write (all of it happens, or none): the API trial when the plan lacks the API
 * (once per account, as section 3 says), the first stream, and a token that reads and appends.
 * A plan without the API whose trial is used up gets a refusal that says where the API is.
 */
export async function startCodeMode(ctx: Ctx): Promise<CodeModeStart> {
  const { deps, principal } = ctx;
  return deps.writer.write(async () => {
    const ws = await getWorkspace(deps, principal.workspaceId);
    let trialStarted = false;
    if (!tierOf(deps, ws).api) {
      if (ws.trialUsed) {
        throw new AppError("plan_required", `This account has had its API trial; the API comes with the plans that include it (see Plans on the account page).`);
      }
      await startTrial(deps, ws.id);
      trialStarted = true;
    } else if (ws.state === "trial_ended") {
      throw new AppError("plan_required", "Your API trial has ended: its token can still read, but sending needs a plan with the API (see Plans on the account page).");
    }
    const { note } = await createStream(ctx, FIRST_STREAM);
    const minted = await mintToken(deps, {
      accountId: principal.accountId,
      workspaceId: ws.id,
      scopes: ["read", "append"],
      name: "first token (onboarding)",
    });
    await setUsageMode(deps, principal.accountId, "code");
    return { trialStarted, streamId: note.id, filename: FIRST_STREAM, token: minted.token };
  });
}
