import { eq } from "drizzle-orm";
import { tokens } from "../db/tables";
import type { Deps } from "../deps";
import { AppError } from "../http/errors";
import { isPlanName, PLAN_NAMES, tierFor } from "../limits/plans";
import { mailOrigin } from "../http/origin";
import { hashPassword, passwordProblem } from "../modules/accounts/password";
import { createAccount, findAccountByEmail, personalWorkspaceId } from "../modules/accounts/service";
import { addTeamMember, createTeam, isMember, MAX_SEATS, removeTeamMember } from "../modules/teams/service";
import { lapse, startTrial, subscribe } from "../modules/accounts/lifecycle";
import { bindExistingSubscription, CHECKOUT_TTL_DAYS, startCheckout } from "../modules/billing/service";
import { startPlanCheckout } from "../modules/billing/checkout";
import { listTokens, MAX_EXPIRY_DAYS, mintExtensionToken, mintToken, parseScopes, revokeToken, TOKEN_NAME_MAX } from "../modules/tokens/service";
import { getWorkspace } from "../modules/workspaces/repo";
import { listGrants, revokeGrant } from "../modules/oauth/grants";
import { revokeAccountGrants } from "../modules/oauth/tokens";
import { flags, UsageError } from "./args";

/** What a command prints: `out` is the machine-readable result (stdout), `info` goes to stderr. */
export interface Output {
  out: (line: string) => void;
  info: (line: string) => void;
}

export async function accountCreate(deps: Deps, argv: string[], io: Output): Promise<void> {
  const f = flags(argv, { email: { type: "string" }, plan: { type: "string" }, password: { type: "string" }, name: { type: "string" } }, ["email", "plan"]);
  const plan = f.plan!;
  if (!isPlanName(plan)) throw new UsageError(`--plan must be one of ${PLAN_NAMES.join(", ")}`);
  let passwordHash: string | null = null;
  if (f.password !== undefined) {
    const problem = passwordProblem(f.password);
    if (problem) throw new UsageError(problem);
    passwordHash = await hashPassword(f.password);
  }
  const { account, workspaceId } = await deps.writer.write(() =>
    createAccount(deps, { email: f.email!, plan, passwordHash, name: f.name }),
  );
  io.info(`created account ${account.email} on plan ${plan} (workspace ${workspaceId})`);
  io.out(account.id);
}

/** The workspace a command acts on: the account's personal one, or a team it belongs to. */
async function targetWorkspace(deps: Deps, email: string, teamId?: string): Promise<{ accountId: string; workspaceId: string }> {
  const account = await findAccountByEmail(deps, email);
  if (!account) throw new AppError("not_found", `no account with e-mail ${email}`);
  if (teamId) {
    if (!(await isMember(deps, teamId, account.id))) throw new AppError("not_found", `${account.email} is not a member of team ${teamId}`);
    return { accountId: account.id, workspaceId: teamId };
  }
  return { accountId: account.id, workspaceId: await personalWorkspaceId(deps, account.id) };
}

export async function accountTrial(deps: Deps, argv: string[], io: Output): Promise<void> {
  const f = flags(argv, { email: { type: "string" }, team: { type: "string" } }, ["email"]);
  const ws = await deps.writer.write(async () => startTrial(deps, (await targetWorkspace(deps, f.email!, f.team)).workspaceId));
  io.info(`API trial started for ${f.email}: 100 notes, 300 MB, until ${new Date(ws.trialEndsAt!).toISOString()}`);
  io.out(new Date(ws.trialEndsAt!).toISOString());
}

/** For self-hosters without a billing provider: what a subscription event would do. */
export async function accountSetPlan(deps: Deps, argv: string[], io: Output): Promise<void> {
  const f = flags(argv, { email: { type: "string" }, team: { type: "string" }, plan: { type: "string" } }, ["email", "plan"]);
  if (!isPlanName(f.plan!)) throw new UsageError(`--plan must be one of ${PLAN_NAMES.join(", ")}`);
  const plan = f.plan;
  const ws = await deps.writer.write(async () => subscribe(deps, (await targetWorkspace(deps, f.email!, f.team)).workspaceId, plan, { paidAt: deps.clock.now() }));
  io.info(`${f.email}${f.team ? ` (team ${f.team})` : ""} is now on plan ${ws.plan}, ${ws.state}`);
  io.out(ws.plan);
}

export async function accountLapse(deps: Deps, argv: string[], io: Output): Promise<void> {
  const f = flags(argv, { email: { type: "string" }, team: { type: "string" } }, ["email"]);
  const ws = await deps.writer.write(async () => lapse(deps, (await targetWorkspace(deps, f.email!, f.team)).workspaceId));
  io.info(`${f.email} is read-only: notes stay readable and exportable, writes are refused`);
  io.out(ws.state);
}

/** The Lemon Squeezy checkout link that subscribes this workspace; the URL goes to stdout. */
export async function billingCheckout(deps: Deps, argv: string[], io: Output): Promise<void> {
  const f = flags(argv, { email: { type: "string" }, team: { type: "string" }, plan: { type: "string" } }, ["email", "plan"]);
  const plan = f.plan!;
  if (!isPlanName(plan) || plan === "free") throw new UsageError(`--plan must be one of ${PLAN_NAMES.filter((p) => p !== "free").join(", ")}`);
  const { workspaceId } = await targetWorkspace(deps, f.email!, f.team);
  // With the provider's API configured, the checkout is created there, as the account page does.
  const url = deps.config.lemonSqueezy
    ? await startPlanCheckout(deps, { workspaceId, tierName: tierFor(deps.config.limitProfile, plan).name, accountId: null, email: f.email!, returnUrl: `${mailOrigin(deps)}/settings#plan` })
    : await deps.writer.write(() => startCheckout(deps, workspaceId, plan));
  io.info(`checkout for ${f.email}${f.team ? ` (team ${f.team})` : ""} on plan ${plan}: usable once, for ${CHECKOUT_TTL_DAYS} days`);
  io.out(url);
}

/** Binds a subscription that predates bound checkouts, so its renewals and expiry reach the workspace. */
export async function billingBind(deps: Deps, argv: string[], io: Output): Promise<void> {
  const f = flags(
    argv,
    { email: { type: "string" }, team: { type: "string" }, subscription: { type: "string" }, variant: { type: "string" }, customer: { type: "string" } },
    ["email", "subscription", "variant"],
  );
  if (!/^\d{1,15}$/.test(f.variant!)) throw new UsageError("--variant must be the store's variant id (a number)");
  const target = await targetWorkspace(deps, f.email!, f.team);
  const plan = await deps.writer.write(() =>
    bindExistingSubscription(deps, { workspaceId: target.workspaceId, subscriptionId: f.subscription!, variantId: Number(f.variant), customerId: f.customer }),
  );
  io.info(`subscription ${f.subscription} (${plan}) now governs ${f.email}${f.team ? ` (team ${f.team})` : ""}; its later events act on it`);
  io.out(target.workspaceId);
}

export async function accountShow(deps: Deps, argv: string[], io: Output): Promise<void> {
  const f = flags(argv, { email: { type: "string" }, team: { type: "string" } }, ["email"]);
  const { workspaceId } = await targetWorkspace(deps, f.email!, f.team);
  const ws = await getWorkspace(deps, workspaceId);
  const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
  io.out(
    JSON.stringify({
      workspace: ws.id,
      kind: ws.kind,
      plan: ws.plan,
      state: ws.state,
      trial_used: ws.trialUsed,
      trial_ends_at: iso(ws.trialEndsAt),
      trash_due_at: iso(ws.trashDueAt),
      last_payment_at: iso(ws.lastPaymentAt),
      storage_used: ws.storageUsed,
    }),
  );
}

export async function tokenList(deps: Deps, argv: string[], io: Output): Promise<void> {
  const f = flags(argv, { email: { type: "string" } }, ["email"]);
  const account = await findAccountByEmail(deps, f.email!);
  if (!account) throw new AppError("not_found", `no account with e-mail ${f.email}`);
  const now = deps.clock.now();
  for (const t of await listTokens(deps, account.id)) {
    const state = t.revokedAt !== null ? "revoked" : t.expiresAt <= now ? "expired" : "active";
    io.out(
      [t.id, state, t.kind, t.scopes, t.noteId ?? "-", t.workspaceId, new Date(t.expiresAt).toISOString(), t.name || "-"].join("\t"),
    );
  }
}

export async function tokenRevoke(deps: Deps, argv: string[], io: Output): Promise<void> {
  const f = flags(argv, { id: { type: "string" } }, ["id"]);
  const found = await deps.writer.write(async () => {
    if (!(await tokenExists(deps, f.id!))) return false;
    await revokeToken(deps, f.id!);
    return true;
  });
  if (!found) throw new AppError("not_found", `no token with id ${f.id}`);
  io.info(`revoked ${f.id}; it answers 401 from now on`);
  io.out(f.id!);
}

/** One line per standing OAuth grant (AI clients over MCP): id, client name (unverified), scopes, last use. */
export async function oauthList(deps: Deps, argv: string[], io: Output): Promise<void> {
  const f = flags(argv, { email: { type: "string" } }, ["email"]);
  const account = await findAccountByEmail(deps, f.email!);
  if (!account) throw new AppError("not_found", `no account with e-mail ${f.email}`);
  const grants = await listGrants(deps, account.id);
  for (const g of grants) io.out([g.id, g.clientName, g.scope, g.lastUsedAt === null ? "never" : new Date(g.lastUsedAt).toISOString()].join("\t"));
  io.info(`${grants.length} connected app${grants.length === 1 ? "" : "s"} for ${account.email}`);
}

/** Ends one grant (--id) or every grant of an account (--email --all): their tokens answer 401 from then on. */
export async function oauthRevoke(deps: Deps, argv: string[], io: Output): Promise<void> {
  const f = flags(argv, { id: { type: "string" }, email: { type: "string" }, all: { type: "boolean" } });
  if (f.id !== undefined && (f.email !== undefined || f.all)) throw new UsageError("give either --id ID or --email E --all");
  if (f.id !== undefined) {
    const grant = await deps.writer.write(() => revokeGrant(deps, f.id!));
    io.info(`revoked ${grant.clientName}'s access (grant ${grant.id}); its tokens answer 401 from now on`);
    io.out(grant.id);
    return;
  }
  if (!f.email || !f.all) throw new UsageError("give --id ID, or --email E --all to end every grant of an account");
  const account = await findAccountByEmail(deps, f.email);
  if (!account) throw new AppError("not_found", `no account with e-mail ${f.email}`);
  const ended = await deps.writer.write(() => revokeAccountGrants(deps, account.id));
  io.info(`revoked ${ended} grant${ended === 1 ? "" : "s"} of ${account.email}`);
  io.out(String(ended));
}

export async function teamCreate(deps: Deps, argv: string[], io: Output): Promise<void> {
  const f = flags(argv, { owner: { type: "string" }, name: { type: "string" } }, ["owner", "name"]);
  const team = await deps.writer.write(() => createTeam(deps, { ownerEmail: f.owner!, name: f.name! }));
  io.info(`created team "${f.name}" owned by ${f.owner}; add members with: notestream team add --team ${team.id} --email E`);
  io.out(team.id);
}

export async function teamAdd(deps: Deps, argv: string[], io: Output): Promise<void> {
  const f = flags(argv, { team: { type: "string" }, email: { type: "string" } }, ["team", "email"]);
  const r = await deps.writer.write(() => addTeamMember(deps, { teamId: f.team!, email: f.email! }));
  io.info(`added ${f.email} to team ${f.team} (${r.seats} of ${MAX_SEATS} seats)`);
  io.out(String(r.seats));
}

export async function teamRemove(deps: Deps, argv: string[], io: Output): Promise<void> {
  const f = flags(argv, { team: { type: "string" }, email: { type: "string" } }, ["team", "email"]);
  const r = await deps.writer.write(() => removeTeamMember(deps, { teamId: f.team!, email: f.email! }));
  io.info(`removed ${f.email} from team ${f.team} (${r.seats} of ${MAX_SEATS} seats); their tokens and AI-client grants on the team are revoked`);
  io.out(String(r.seats));
}

export async function tokenCreate(deps: Deps, argv: string[], io: Output): Promise<void> {
  const f = flags(
    argv,
    {
      email: { type: "string" },
      team: { type: "string" },
      scope: { type: "string" },
      note: { type: "string" },
      "expires-in-days": { type: "string" },
      name: { type: "string" },
      extension: { type: "boolean" },
    },
    requiredTokenFlags(argv),
  );
  if (f.extension) {
    if (!f.note) throw new UsageError("--extension needs --note: the stream the extension appends to");
    const minted = await deps.writer.write(async () => {
      const target = await targetWorkspace(deps, f.email!, f.team);
      return mintExtensionToken(deps, { ...target, noteId: f.note! });
    });
    io.info(`browser-extension token ${minted.id} (append to ${f.note}, 60/min); any earlier one is revoked; shown only this once`);
    io.out(minted.token);
    return;
  }
  if (!f.scope) throw new UsageError("--scope is required");
  let scopes;
  try {
    scopes = parseScopes(f.scope!);
  } catch (e) {
    throw new UsageError(`--scope: ${(e as Error).message}`);
  }
  let days: number | undefined;
  if (f["expires-in-days"] !== undefined) {
    days = Number(f["expires-in-days"]);
    if (!/^\d+$/.test(f["expires-in-days"]) || days < 1 || days > MAX_EXPIRY_DAYS) {
      throw new UsageError(`--expires-in-days must be a whole number from 1 to ${MAX_EXPIRY_DAYS}`);
    }
  }
  if (f.name !== undefined && f.name.length > TOKEN_NAME_MAX) throw new UsageError(`--name must be at most ${TOKEN_NAME_MAX} characters`);
  const minted = await deps.writer.write(async () =>
    mintToken(deps, { ...(await targetWorkspace(deps, f.email!, f.team)), scopes, noteId: f.note ?? null, expiresInDays: days, name: f.name }),
  );
  io.info(
    `token ${minted.id} (${scopes.join(",")}${f.note ? `, pinned to ${f.note}` : ""}) expires ${new Date(minted.expiresAt).toISOString()}; it is shown only this once`,
  );
  io.out(minted.token);
}

/** --scope is required unless --extension is given. */
function requiredTokenFlags(argv: string[]): ("email" | "scope")[] {
  return argv.includes("--extension") ? ["email"] : ["email", "scope"];
}

async function tokenExists(deps: Deps, id: string): Promise<boolean> {
  const [row] = await deps.db.select({ id: tokens.id }).from(tokens).where(eq(tokens.id, id));
  return row !== undefined;
}

/**
 * Errors a person can act on: printed as one line, exit code 2 (usage) or 1. A refusal is any
 * AppError but internal_error, which is a bug and keeps its stack trace.
 */
export function isUserError(e: unknown): boolean {
  return e instanceof UsageError || (e instanceof AppError && e.status < 500);
}
