import { and, asc, count, eq, inArray, isNull, ne, or } from "drizzle-orm";
import { t } from "elysia";
import type { Deps } from "../../deps";
import { accountLinks, accounts, exportsTable, notes, oauthCodes, sessions, workspaceMembers, workspaces } from "../../db/tables";
import { AppError } from "../../http/errors";
import { logEvent } from "../../http/log";
import { mailOrigin } from "../../http/origin";
import { defineQueue } from "../../jobs/define-queue";
import type { JobOutcome } from "../../jobs/runner";
import { enqueueMail } from "../../mail/queue";
import { revokeAccountGrants } from "../oauth/tokens";
import { exportStorage } from "../export/storage";
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
 *   and the exports' zips (files on disk; rows of export_files on PostgreSQL). A restart mid-way
 *   runs the job again from where it stopped.
 * Teams the account owns go with it when nobody else uses them; one that others use would take
 * their notes, so it stops the deletion until they have left.
 */

/** Notes deleted per write: the trash purge's batch. */
const NOTE_BATCH = 200;

/** Teams the account owns that other people are members of. */
export async function sharedTeamsOwned(deps: Deps, accountId: string): Promise<{ name: string; others: number }[]> {
  return deps.db
    .select({ name: workspaces.name, others: count(workspaceMembers.accountId) })
    .from(workspaces)
    .innerJoin(workspaceMembers, and(eq(workspaceMembers.workspaceId, workspaces.id), ne(workspaceMembers.accountId, accountId)))
    .where(and(eq(workspaces.ownerId, accountId), eq(workspaces.kind, "team")))
    .groupBy(workspaces.id, workspaces.name)
    .orderBy(asc(workspaces.name));
}

async function assertNoSharedTeams(deps: Deps, accountId: string): Promise<void> {
  const [team, ...more] = await sharedTeamsOwned(deps, accountId);
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
  await assertNoSharedTeams(deps, account.id);
  await deps.writer.write(async () => {
    const token = await newLink(deps, account.id, "delete_account");
    await enqueueMail(deps, {
      to: account.email,
      subject: "[notestream] confirm deleting your account",
      text: `Someone (hopefully you) asked to delete the notestream account ${account.email} and every note in it.\n\nTo delete it, open this link and confirm:\n\n  ${mailOrigin(deps)}/settings/delete/confirm?token=${token}\n\nThe link works for one hour. If it wasn't you, ignore this mail, and change your password: whoever asked knew it.`,
    });
  });
}

/** The account a deletion link would delete, while the link can still be used (without using it). */
export async function pendingDeletion(deps: Deps, token: string): Promise<{ email: string } | null> {
  const link = await liveLink(deps, token, "delete_account");
  if (!link) return null;
  const [account] = await deps.db.select({ email: accounts.email }).from(accounts).where(eq(accounts.id, link.accountId));
  return account ?? null;
}

/**
 * Follows the mailed link: the account stops working in this write, and the deletion job is
 * queued with it. Answers the address it had, for the goodbye.
 */
export async function deleteAccountByLink(deps: Deps, token: string): Promise<string> {
  return deps.writer.write(async () => {
    const link = await takeLink(deps, token, "delete_account");
    const account = (await deps.db.select().from(accounts).where(eq(accounts.id, link.accountId)))[0]!;
    // Checked again: someone may have joined one of its teams since the link was mailed.
    await assertNoSharedTeams(deps, account.id);
    await deps.db.delete(sessions).where(eq(sessions.accountId, account.id));
    await revokeAccountTokens(deps, account.id);
    await revokeAccountGrants(deps, account.id);
    // A code not yet exchanged would otherwise become a new grant while the job runs.
    await deps.db.delete(oauthCodes).where(eq(oauthCodes.accountId, account.id));
    await deps.db.update(accounts).set({ passwordHash: null, updatedAt: deps.clock.now() }).where(eq(accounts.id, account.id));
    await deps.db.delete(accountLinks).where(and(eq(accountLinks.accountId, account.id), isNull(accountLinks.usedAt)));
    await accountDeletionQueue.enqueue(deps, { accountId: account.id }, { serialKey: account.id });
    return account.email;
  });
}

/** One batch of the notes of the workspaces the account owns; their rows cascade (chunks, versions, inbox, deliveries). */
async function deleteNoteBatch(deps: Deps, accountId: string): Promise<number> {
  const ids = (
    await deps.db
      .select({ id: notes.id })
      .from(notes)
      .innerJoin(workspaces, eq(workspaces.id, notes.workspaceId))
      .where(eq(workspaces.ownerId, accountId))
      .limit(NOTE_BATCH)
  ).map((r) => r.id);
  if (ids.length) await deps.db.delete(notes).where(inArray(notes.id, ids));
  return ids.length;
}

/** The last write: the account row and, by cascade, everything else it owns, with its exports' zips. */
async function finishDeletion(deps: Deps, accountId: string): Promise<JobOutcome> {
  const [account] = await deps.db.select().from(accounts).where(eq(accounts.id, accountId));
  if (!account) return { ok: true };
  const owned = deps.db.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.ownerId, accountId));
  const exported = await deps.db
    .select({ id: exportsTable.id, filePath: exportsTable.filePath })
    .from(exportsTable)
    .where(or(eq(exportsTable.accountId, accountId), inArray(exportsTable.workspaceId, owned)));
  await exportStorage(deps).files.remove(exported);
  await deps.db.delete(accounts).where(eq(accounts.id, accountId));
  deps.tokens.clear();
  await enqueueMail(deps, {
    to: account.email,
    subject: "[notestream] your account is deleted",
    text: `Your notestream account ${account.email} is deleted, with every note, folder, version, token and export it had.\n\nThank you for using notestream.`,
  });
  deps.writer.afterCommit(() => logEvent("info", "account deleted", { account_id: accountId }));
  return { ok: true };
}

export const AccountDeletionJob = t.Object({ accountId: t.String() });

export const accountDeletionQueue = defineQueue("account-deletion", AccountDeletionJob, {
  run: async (deps, { accountId }) => {
    while ((await deps.writer.write(() => deleteNoteBatch(deps, accountId))) === NOTE_BATCH);
    return () => finishDeletion(deps, accountId);
  },
});
