import type { Deps } from "../deps";
import { CapExceeded } from "../http/errors";
import { isPlanName, PLAN_NAMES } from "../limits/plans";
import { hashPassword, passwordProblem } from "../modules/accounts/password";
import { AccountError, createAccount, findAccountByEmail, personalWorkspaceId } from "../modules/accounts/service";
import { addTeamMember, createTeam, isMember, TeamError } from "../modules/teams/service";
import { MAX_EXPIRY_DAYS, mintToken, parseScopes, TokenError } from "../modules/tokens/service";
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

export async function teamCreate(deps: Deps, argv: string[], io: Output): Promise<void> {
  const f = flags(argv, { owner: { type: "string" }, name: { type: "string" } }, ["owner", "name"]);
  const team = await deps.writer.write(() => createTeam(deps, { ownerEmail: f.owner!, name: f.name! }));
  io.info(`created team "${f.name}" owned by ${f.owner}; add members with: notestream team add --team ${team.id} --email E`);
  io.out(team.id);
}

export async function teamAdd(deps: Deps, argv: string[], io: Output): Promise<void> {
  const f = flags(argv, { team: { type: "string" }, email: { type: "string" } }, ["team", "email"]);
  const r = await deps.writer.write(() => addTeamMember(deps, { teamId: f.team!, email: f.email! }));
  io.info(`added ${f.email} to team ${f.team} (${r.seats} of 25 seats)`);
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
    },
    ["email", "scope"],
  );
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
  const minted = await deps.writer.write(() => {
    const account = findAccountByEmail(deps, f.email!);
    if (!account) throw new AccountError(`no account with e-mail ${f.email}`);
    let workspaceId: string;
    if (f.team) {
      if (!isMember(deps, f.team, account.id)) throw new TeamError(`${account.email} is not a member of team ${f.team}`);
      workspaceId = f.team;
    } else {
      workspaceId = personalWorkspaceId(deps, account.id);
    }
    return mintToken(deps, { accountId: account.id, workspaceId, scopes, noteId: f.note ?? null, expiresInDays: days, name: f.name });
  });
  io.info(
    `token ${minted.id} (${scopes.join(",")}${f.note ? `, pinned to ${f.note}` : ""}) expires ${new Date(minted.expiresAt).toISOString()}; it is shown only this once`,
  );
  io.out(minted.token);
}

/** Errors a person can act on: printed as one line, exit code 2 (usage) or 1. */
export function isUserError(e: unknown): boolean {
  return (
    e instanceof UsageError ||
    e instanceof AccountError ||
    e instanceof TeamError ||
    e instanceof TokenError ||
    e instanceof CapExceeded
  );
}
