import { rmSync } from "node:fs";
import { join } from "node:path";
import { and, eq, isNull } from "drizzle-orm";
import { t } from "elysia";
import type { Deps } from "../../deps";
import { accountLinks, accounts, oauthCodes, sessions } from "../../db/schema";
import { AppError } from "../../http/errors";
import { logEvent } from "../../http/log";
import { mailOrigin } from "../../http/origin";
import { defineQueue } from "../../jobs/define-queue";
import type { JobOutcome } from "../../jobs/runner";
import { enqueueMail } from "../../mail/queue";
import { revokeAccountGrants } from "../../mcp/oauth/tokens";
import { revokeAccountTokens } from "../tokens/service";
import type { AccountRow } from "./service";
import { checkCurrentPassword, liveLink, newLink, takeLink } from "./web-auth";

/**
 * Deleting an account, asked for with the password and confirmed from the mailbox:
 * - at once (the confirming write), nothing of it works any more: its browsers are signed out,
 *   its API tokens and AI-client grants end, its password is gone (sign-in fails as for an
 *   unknown address), and a job is queued in the same write;
 * - the job deletes the notes of the workspaces it owns a bounded batch per write, as the trash's
 *   purge does, so appends never wait behind one huge delete; then the account row, whose
 *   cascade takes the rest (workspaces, folders, tokens, exports, sessions, team seats, grants),
 *   and the export files on disk. A restart mid-way runs the job again from where it stopped.
 * Teams the account owns go with it when nobody else uses them; one that others use would take
 * their notes, so it stops the deletion until they have left.
 */

/** Notes deleted per write: the trash purge's batch. */
const NOTE_BATCH = 200;

/** Teams the account owns that other people are members of. */
export function sharedTeamsOwned(deps: Deps, accountId: string): { name: string; others: number }[] {
  return deps.db.$client
    .query<{ name: string; others: number }, [string, string]>(
      `SELECT w.name AS name, count(m.account_id) AS others FROM workspaces w
       JOIN workspace_members m ON m.workspace_id = w.id AND m.account_id <> ?1
       WHERE w.owner_id = ?2 AND w.kind = 'team' GROUP BY w.id ORDER BY w.name`,
    )
    .all(accountId, accountId);
}

function assertNoSharedTeams(deps: Deps, accountId: string): void {
  const [team, ...more] = sharedTeamsOwned(deps, accountId);
  if (!team) return;
  const named = more.length ? `the teams "${team.name}" and ${more.length} more` : `the team "${team.name}"`;
  throw new AppError(
    "conflict",
    `You own ${named}, which other people use: deleting your account would delete the team's notes for them too. Ask the operator to take the other members off the team first.`,
  );
}

/** Checks the password, then mails the link that deletes the account (one hour). */
export async function requestAccountDeletion(deps: Deps, account: AccountRow, password: string): Promise<void> {
  await checkCurrentPassword(account, password, { message: "That is not your current password." });
  assertNoSharedTeams(deps, account.id);
  await deps.writer.write(() => {
    const token = newLink(deps, account.id, "delete_account");
    enqueueMail(deps, {
      to: account.email,
      subject: "[notestream] confirm deleting your account",
      text: `Someone (hopefully you) asked to delete the notestream account ${account.email} and every note in it.\n\nTo delete it, open this link and confirm:\n\n  ${mailOrigin(deps)}/settings/delete/confirm?token=${token}\n\nThe link works for one hour. If it wasn't you, ignore this mail, and change your password: whoever asked knew it.`,
    });
  });
}

/** The account a deletion link would delete, while the link can still be used (without using it). */
export function pendingDeletion(deps: Deps, token: string): { email: string } | null {
  const link = liveLink(deps, token, "delete_account");
  if (!link) return null;
  return deps.db.select({ email: accounts.email }).from(accounts).where(eq(accounts.id, link.accountId)).get() ?? null;
}

/**
 * Follows the mailed link: the account stops working in this write, and the deletion job is
 * queued with it. Answers the address it had, for the goodbye.
 */
export async function deleteAccountByLink(deps: Deps, token: string): Promise<string> {
  return deps.writer.write(() => {
    const link = takeLink(deps, token, "delete_account");
    const account = deps.db.select().from(accounts).where(eq(accounts.id, link.accountId)).get()!;
    // Checked again: someone may have joined one of its teams since the link was mailed.
    assertNoSharedTeams(deps, account.id);
    deps.db.delete(sessions).where(eq(sessions.accountId, account.id)).run();
    revokeAccountTokens(deps, account.id);
    revokeAccountGrants(deps, account.id);
    // A code not yet exchanged would otherwise become a new grant while the job runs.
    deps.db.delete(oauthCodes).where(eq(oauthCodes.accountId, account.id)).run();
    deps.db.update(accounts).set({ passwordHash: null, updatedAt: deps.clock.now() }).where(eq(accounts.id, account.id)).run();
    deps.db.delete(accountLinks).where(and(eq(accountLinks.accountId, account.id), isNull(accountLinks.usedAt))).run();
    accountDeletionQueue.enqueue(deps, { accountId: account.id }, { serialKey: account.id });
    return account.email;
  });
}

/** One batch of the notes of the workspaces the account owns; their rows cascade (chunks, versions, inbox, deliveries). */
function deleteNoteBatch(deps: Deps, accountId: string): number {
  const ids = deps.db.$client
    .query<{ id: string }, [string, number]>(
      "SELECT n.id AS id FROM notes n JOIN workspaces w ON w.id = n.workspace_id WHERE w.owner_id = ? LIMIT ?",
    )
    .all(accountId, NOTE_BATCH)
    .map((r) => r.id);
  const drop = deps.db.$client.query("DELETE FROM notes WHERE id = ?");
  for (const id of ids) drop.run(id);
  return ids.length;
}

/** The last write: the account row and, by cascade, everything else it owns; then its export files. */
function finishDeletion(deps: Deps, accountId: string): JobOutcome {
  const account = deps.db.select().from(accounts).where(eq(accounts.id, accountId)).get();
  if (!account) return { ok: true };
  const exportDir = join(deps.config.dataDir, "exports");
  // A building export has no path yet, but its file appears under its id.
  const files = deps.db.$client
    .query<{ id: string; path: string | null }, [string, string]>(
      `SELECT e.id AS id, e.file_path AS path FROM exports e
       WHERE e.account_id = ?1 OR e.workspace_id IN (SELECT id FROM workspaces WHERE owner_id = ?2)`,
    )
    .all(accountId, accountId)
    .map((e) => e.path ?? join(exportDir, `${e.id}.zip`));
  deps.db.delete(accounts).where(eq(accounts.id, accountId)).run();
  deps.tokens.clear();
  enqueueMail(deps, {
    to: account.email,
    subject: "[notestream] your account is deleted",
    text: `Your notestream account ${account.email} is deleted, with every note, folder, version, token and export it had.\n\nThank you for using notestream.`,
  });
  deps.writer.afterCommit(() => {
    for (const f of files) rmSync(f, { force: true });
    logEvent("info", "account deleted", { account_id: accountId });
  });
  return { ok: true };
}

export const AccountDeletionJob = t.Object({ accountId: t.String() });

export const accountDeletionQueue = defineQueue("account-deletion", AccountDeletionJob, {
  run: async (deps, { accountId }) => {
    while ((await deps.writer.write(() => deleteNoteBatch(deps, accountId))) === NOTE_BATCH);
    return () => finishDeletion(deps, accountId);
  },
});
