import { and, eq, isNull, ne } from "drizzle-orm";
import { mailOrigin } from "../../http/origin";
import type { Deps } from "../../deps";
import { accountLinks, accounts, sessions } from "../../db/tables";
import { AppError, ValidationFailed } from "../../http/errors";
import { randomBase62 } from "../../lib/random";
import { sha256Hex } from "../../lib/secrets";
import { charLength, stripControl } from "../../lib/text";
import { enqueueMail } from "../../mail/queue";
import { dummyPasswordHash, hashPassword, passwordMessage, passwordProblem } from "./password";
import { createAccount, findAccountByEmail, isPlausibleEmail, normaliseEmail, type AccountRow } from "./service";
import { revokeAccountGrants } from "../oauth/tokens";

export const MIN_AGE = 16;
/** A profile name as stored: no control characters, no surrounding space. */
const profileName = (name: string) => stripControl(name).trim();

/** The profile's limits, in characters; the sign-up and account forms say them too. */
export const NAME_MAX_CHARS = 80;
export const BIO_MAX_CHARS = 500;
const NAME_TOO_LONG = `Your name can be at most ${NAME_MAX_CHARS} characters.`;
const LINK_TTL_MS = { confirm: 3 * 86_400_000, reset: 3_600_000, email_change: 86_400_000, delete_account: 3_600_000 } as const;
export type LinkPurpose = keyof typeof LINK_TTL_MS;
// The list (over 100,000 domains) loads on the first check, not at start-up.
let disposable: Set<string> | null = null;

export function isDisposable(email: string): boolean {
  disposable ??= new Set<string>(require("disposable-email-domains") as string[]);
  const DISPOSABLE = disposable;
  const domain = email.split("@")[1]?.toLowerCase() ?? "";
  // Sub-domains of a listed domain are disposable too.
  const parts = domain.split(".");
  for (let i = 0; i < parts.length - 1; i++) if (DISPOSABLE.has(parts.slice(i).join("."))) return true;
  return false;
}

/** Years between a YYYY-MM-DD birth date and `now`. */
export function ageOn(birthDate: string, now: number): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(birthDate);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const born = new Date(Date.UTC(y, mo - 1, d));
  if (born.getUTCMonth() !== mo - 1 || born.getUTCDate() !== d) return null;
  const today = new Date(now);
  let age = today.getUTCFullYear() - y;
  if (today.getUTCMonth() < mo - 1 || (today.getUTCMonth() === mo - 1 && today.getUTCDate() < d)) age--;
  return age;
}

/** Inside a write: a one-time link's token, of which only the hash is stored. */
export async function newLink(deps: Deps, accountId: string, purpose: LinkPurpose, newEmail: string | null = null): Promise<string> {
  const token = randomBase62(40);
  const now = deps.clock.now();
  await deps.db
    .insert(accountLinks)
    .values({ tokenHash: sha256Hex(token), accountId, purpose, newEmail, createdAt: now, expiresAt: now + LINK_TTL_MS[purpose] });
  return token;
}

/** A link that can still be used, without using it (to show what following it will do), or null. */
export async function liveLink(deps: Deps, token: string, purpose: LinkPurpose) {
  const [link] = await deps.db
    .select()
    .from(accountLinks)
    .where(and(eq(accountLinks.tokenHash, sha256Hex(token)), eq(accountLinks.purpose, purpose), isNull(accountLinks.usedAt)));
  return link && link.expiresAt > deps.clock.now() ? link : null;
}

/** Takes a link once: unknown, used or expired links are refused alike. */
export async function takeLink(deps: Deps, token: string, purpose: LinkPurpose) {
  const link = await liveLink(deps, token, purpose);
  if (!link) throw new AppError("not_found", "this link is not valid any more; ask for a new one");
  await deps.db.update(accountLinks).set({ usedAt: deps.clock.now() }).where(eq(accountLinks.tokenHash, link.tokenHash));
  return link;
}

export interface SignUpInput {
  email: string;
  password: string;
  /** The profile name, optional. */
  name?: string;
  birthDate?: string;
  ageConfirmed?: boolean;
}

/** Checks a sign-up before anything is hashed or written; each problem names its field. */
export function signUpProblems(deps: Deps, input: SignUpInput): { field: string; code: string; message: string }[] {
  const problems: { field: string; code: string; message: string }[] = [];
  const email = normaliseEmail(input.email);
  if (!isPlausibleEmail(email)) problems.push({ field: "email", code: "invalid", message: "Enter a valid e-mail address." });
  else if (isDisposable(email)) problems.push({ field: "email", code: "disposable", message: "Disposable e-mail addresses can't be used; use an address you keep." });
  if (charLength(profileName(input.name ?? "")) > NAME_MAX_CHARS) problems.push({ field: "name", code: "too_long", message: NAME_TOO_LONG });
  const pw = passwordProblem(input.password);
  if (pw) problems.push({ field: "password", code: "weak", message: passwordMessage(pw) });
  if (input.birthDate) {
    const age = ageOn(input.birthDate, deps.clock.now());
    if (age === null) problems.push({ field: "birth_date", code: "invalid", message: "Enter your birth date as a date." });
    else if (age < MIN_AGE) problems.push({ field: "birth_date", code: "too_young", message: `You must be ${MIN_AGE} or older to use notestream.` });
  } else if (!input.ageConfirmed) {
    problems.push({ field: "birth_date", code: "required", message: `Give your birth date or confirm that you are ${MIN_AGE} or older.` });
  }
  return problems;
}

/**
 * Creates an unconfirmed free account and mails the confirmation link. An address that has an
 * account already gets a mail saying someone tried, and the caller the same answer as for a new
 * one (the password is hashed either way, so the time taken matches too): sign-up does not tell
 * who has an account.
 */
export async function signUp(deps: Deps, input: SignUpInput, plan: "free" = "free"): Promise<void> {
  const problems = signUpProblems(deps, input);
  if (problems.length) throw new ValidationFailed(problems);
  const passwordHash = await hashPassword(input.password);
  await deps.writer.write(async () => {
    const existing = await findAccountByEmail(deps, input.email);
    if (existing) return sendSignUpAttemptNotice(deps, existing);
    const { account } = await createAccount(deps, { email: input.email, plan, passwordHash, name: profileName(input.name ?? ""), confirmed: false, ageConfirmed: true });
    await sendConfirmation(deps, account);
  });
}

/**
 * No link with a token: if the account was never confirmed, someone else may have made it with a
 * password they know, so the way in is a reset (which sets a new password and confirms).
 */
async function sendSignUpAttemptNotice(deps: Deps, account: AccountRow): Promise<void> {
  await enqueueMail(deps, {
    to: account.email,
    subject: "[notestream] someone tried to sign up with your address",
    text: `Someone (hopefully you) tried to create a notestream account with this address, which has one already. Nothing was changed.\n\nIf it was you, sign in:\n\n  ${mailOrigin(deps)}/signin\n\nor, if you don't know the password (or never confirmed the address), choose a new one:\n\n  ${mailOrigin(deps)}/reset\n\nIf it wasn't you, ignore this mail.`,
  });
}


export async function sendConfirmation(deps: Deps, account: AccountRow): Promise<void> {
  const token = await newLink(deps, account.id, "confirm");
  await enqueueMail(deps, {
    to: account.email,
    subject: "[notestream] confirm your e-mail address",
    text: `Welcome to notestream.\n\nConfirm your address to sign in:\n\n  ${mailOrigin(deps)}/confirm?token=${token}\n\nThe link works for 3 days.`,
  });
}

export async function resendConfirmation(deps: Deps, email: string): Promise<void> {
  await deps.writer.write(async () => {
    const account = await findAccountByEmail(deps, email);
    // Same answer whether or not the address has an account: no account discovery.
    if (account && account.emailConfirmedAt === null) await sendConfirmation(deps, account);
  });
}

export async function confirmEmail(deps: Deps, token: string): Promise<AccountRow> {
  return deps.writer.write(async () => {
    const link = await takeLink(deps, token, "confirm");
    const now = deps.clock.now();
    await deps.db.update(accounts).set({ emailConfirmedAt: now, updatedAt: now }).where(eq(accounts.id, link.accountId));
    const [account] = await deps.db.select().from(accounts).where(eq(accounts.id, link.accountId));
    return account!;
  });
}

/**
 * Checks a password; the same error, after the same Argon2 work, for an unknown address, an
 * account without a password and a wrong password.
 */
export async function signIn(deps: Deps, email: string, password: string): Promise<AccountRow> {
  const account = await findAccountByEmail(deps, email);
  const hash = account?.passwordHash ?? (await dummyPasswordHash());
  const ok = (await Bun.password.verify(password, hash)) && !!account?.passwordHash;
  if (!account || !ok) throw new AppError("unauthorized", "That e-mail address and password don't match an account.");
  if (account.emailConfirmedAt === null) {
    throw new AppError("insufficient_scope", "Confirm your e-mail address first: follow the link we mailed you (or ask for a new one below).");
  }
  return account;
}

export async function requestPasswordReset(deps: Deps, email: string): Promise<void> {
  await deps.writer.write(async () => {
    const account = await findAccountByEmail(deps, email);
    if (!account) return;
    const token = await newLink(deps, account.id, "reset");
    await enqueueMail(deps, {
      to: account.email,
      subject: "[notestream] reset your password",
      text: `Someone (hopefully you) asked to reset the password of this notestream account.\n\n  ${mailOrigin(deps)}/reset/confirm?token=${token}\n\nThe link works for one hour. If it wasn't you, ignore this mail.`,
    });
  });
}

/** Refuses a new password that breaks the rule, naming the form's field. */
export function assertNewPassword(password: string, field = "password"): void {
  const problem = passwordProblem(password);
  if (problem) throw ValidationFailed.field(field, "weak", passwordMessage(problem));
}

export async function resetPassword(deps: Deps, token: string, password: string): Promise<AccountRow> {
  assertNewPassword(password);
  const passwordHash = await hashPassword(password);
  return deps.writer.write(async () => {
    const link = await takeLink(deps, token, "reset");
    const now = deps.clock.now();
    // A reset also confirms the address: the link arrived there.
    await deps.db.update(accounts).set({ passwordHash, emailConfirmedAt: now, updatedAt: now }).where(eq(accounts.id, link.accountId));
    await deps.db.delete(sessions).where(eq(sessions.accountId, link.accountId));
    // Whoever knew the old password may have allowed an AI client: every grant ends with it.
    await revokeAccountGrants(deps, link.accountId);
    const [account] = await deps.db.select().from(accounts).where(eq(accounts.id, link.accountId));
    return account!;
  });
}

/**
 * The signed-in person proves they know the password before changing what protects the account;
 * `field` and `message` are the asking form's.
 */
export async function checkCurrentPassword(
  account: AccountRow,
  password: string,
  { field = "password", message = "Your current password is needed to change the address, and that was not it." } = {},
): Promise<void> {
  const ok = !!password && !!account.passwordHash && (await Bun.password.verify(password, account.passwordHash));
  if (!ok) throw ValidationFailed.field(field, "wrong", message);
}

/**
 * A new password chosen while signed in (the current one checked by the caller): every other
 * browser is signed out, this one (`keepSessionHash`) stays, and the address hears of it. AI-client
 * grants end (a client allowed by whoever knew the old password must ask again); API tokens are
 * left as they are: the access page ends them when wanted.
 */
export async function changePassword(deps: Deps, account: AccountRow, password: string, keepSessionHash: string | null): Promise<void> {
  assertNewPassword(password, "new_password");
  const passwordHash = await hashPassword(password);
  await deps.writer.write(async () => {
    await deps.db.update(accounts).set({ passwordHash, updatedAt: deps.clock.now() }).where(eq(accounts.id, account.id));
    const mine = eq(sessions.accountId, account.id);
    await deps.db.delete(sessions).where(keepSessionHash ? and(mine, ne(sessions.idHash, keepSessionHash)) : mine);
    await revokeAccountGrants(deps, account.id);
    await enqueueMail(deps, {
      to: account.email,
      subject: "[notestream] your password was changed",
      text: `The password of your notestream account was changed, and every other browser signed in to it was signed out.\n\nIf it wasn't you, choose a new password now:\n\n  ${mailOrigin(deps)}/reset\n\nthen end the API tokens you did not make at Account → API tokens (AI clients you allowed have been signed out and must be allowed again).`,
    });
  });
}

export async function requestEmailChange(deps: Deps, account: AccountRow, newEmail: string): Promise<void> {
  const email = normaliseEmail(newEmail);
  if (!isPlausibleEmail(email)) throw ValidationFailed.field("email", "invalid", "Enter a valid e-mail address.");
  if (isDisposable(email)) throw ValidationFailed.field("email", "disposable", "Disposable e-mail addresses can't be used.");
  await deps.writer.write(async () => {
    if (await findAccountByEmail(deps, email)) throw ValidationFailed.field("email", "taken", "Another account uses this address.");
    const token = await newLink(deps, account.id, "email_change", email);
    await enqueueMail(deps, {
      to: email,
      subject: "[notestream] confirm your new e-mail address",
      text: `Confirm that notestream should use this address for ${account.email}'s account:\n\n  ${mailOrigin(deps)}/settings/email/confirm?token=${token}\n\nThe link works for one day.`,
    });
  });
}

/**
 * Moves the account to the confirmed address and ends its other browser sessions: whoever signed
 * in under the old address signs in again. `keepSessionHash` is the confirming browser's session.
 */
export async function confirmEmailChange(deps: Deps, token: string, keepSessionHash: string | null): Promise<AccountRow> {
  return deps.writer.write(async () => {
    const link = await takeLink(deps, token, "email_change");
    if (await findAccountByEmail(deps, link.newEmail!)) throw ValidationFailed.field("email", "taken", "Another account uses this address now.");
    const now = deps.clock.now();
    await deps.db.update(accounts).set({ email: link.newEmail!, emailConfirmedAt: now, updatedAt: now }).where(eq(accounts.id, link.accountId));
    const mine = eq(sessions.accountId, link.accountId);
    await deps.db.delete(sessions).where(keepSessionHash ? and(mine, ne(sessions.idHash, keepSessionHash)) : mine);
    const [account] = await deps.db.select().from(accounts).where(eq(accounts.id, link.accountId));
    return account!;
  });
}

export async function updateProfile(deps: Deps, accountId: string, input: { name: string; bio: string }): Promise<void> {
  const name = profileName(input.name);
  const bio = input.bio.replace(/\r\n/g, "\n").replace(/[\p{Cc}]/gu, (c) => (c === "\n" ? c : "")).trim();
  if (charLength(name) > NAME_MAX_CHARS) throw ValidationFailed.field("name", "too_long", NAME_TOO_LONG);
  if (charLength(bio) > BIO_MAX_CHARS) throw ValidationFailed.field("bio", "too_long", `Your bio can be at most ${BIO_MAX_CHARS} characters.`);
  await deps.writer.write(async () => {
    await deps.db.update(accounts).set({ name, bio, updatedAt: deps.clock.now() }).where(eq(accounts.id, accountId));
  });
}
