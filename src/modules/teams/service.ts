import { and, asc, count, eq, isNull } from "drizzle-orm";
import type { Deps } from "../../deps";
import { oauthTokens, tokens, workspaceMembers, workspaces } from "../../db/tables";
import { AppError } from "../../http/errors";
import { newId } from "../../lib/ids";
import { findAccountByEmail } from "../accounts/service";

/** A team has at most 25 seats, its owner's included. */
export const MAX_SEATS = 25;

export async function createTeam(deps: Deps, input: { ownerEmail: string; name: string }): Promise<{ id: string }> {
  const owner = await findAccountByEmail(deps, input.ownerEmail);
  if (!owner) throw new AppError("not_found", `no account with e-mail ${input.ownerEmail}`);
  const name = input.name.trim();
  if (!name || name.length > 80) throw new AppError("bad_request", "team name must be 1 to 80 characters");
  const now = deps.clock.now();
  const id = newId("ws");
  await deps.db.insert(workspaces).values({ id, kind: "team", name, ownerId: owner.id, plan: "team", createdAt: now });
  await deps.db.insert(workspaceMembers).values({ workspaceId: id, accountId: owner.id, role: "owner", createdAt: now });
  return { id };
}

export async function addTeamMember(deps: Deps, input: { teamId: string; email: string }): Promise<{ seats: number }> {
  const [team] = await deps.db.select().from(workspaces).where(eq(workspaces.id, input.teamId));
  if (!team || team.kind !== "team") throw new AppError("not_found", `no team with id ${input.teamId}`);
  const account = await findAccountByEmail(deps, input.email);
  if (!account) throw new AppError("not_found", `no account with e-mail ${input.email}`);
  if (await isMember(deps, team.id, account.id)) throw new AppError("conflict", `${account.email} is already on team ${team.id}`);
  const seats = await seatCount(deps, team.id);
  if (seats >= MAX_SEATS) throw new AppError("conflict", `team ${team.id} has all ${MAX_SEATS} seats taken`);
  await deps.db
    .insert(workspaceMembers)
    .values({ workspaceId: team.id, accountId: account.id, role: "member", createdAt: deps.clock.now() });
  return { seats: seats + 1 };
}

/**
 * Takes a member off a team. Their tokens and AI-client grants on the team's workspace end with
 * the seat (they could otherwise go on writing to a team they left); their browser sessions fall
 * back to their personal workspace on the next request (web/session.ts checks membership).
 */
export async function removeTeamMember(deps: Deps, input: { teamId: string; email: string }): Promise<{ seats: number }> {
  const [team] = await deps.db.select().from(workspaces).where(eq(workspaces.id, input.teamId));
  if (!team || team.kind !== "team") throw new AppError("not_found", `no team with id ${input.teamId}`);
  const account = await findAccountByEmail(deps, input.email);
  if (!account || !(await isMember(deps, team.id, account.id))) throw new AppError("not_found", `${input.email} is not a member of team ${team.id}`);
  if (team.ownerId === account.id) throw new AppError("conflict", `${account.email} owns team ${team.id} and stays on it`);
  const now = deps.clock.now();
  await deps.db.delete(workspaceMembers).where(and(eq(workspaceMembers.workspaceId, team.id), eq(workspaceMembers.accountId, account.id)));
  await deps.db
    .update(tokens)
    .set({ revokedAt: now })
    .where(and(eq(tokens.workspaceId, team.id), eq(tokens.accountId, account.id), isNull(tokens.revokedAt)));
  await deps.db
    .update(oauthTokens)
    .set({ revokedAt: now })
    .where(and(eq(oauthTokens.workspaceId, team.id), eq(oauthTokens.accountId, account.id), isNull(oauthTokens.revokedAt)));
  // Cached principals would keep answering until they expire.
  deps.tokens.clear();
  return { seats: await seatCount(deps, team.id) };
}

export interface WorkspaceChoice {
  id: string;
  kind: "personal" | "team";
  name: string;
}

/** The workspaces an account may work in: its personal one first, then its teams by name. */
export async function workspacesOf(deps: Deps, accountId: string): Promise<WorkspaceChoice[]> {
  return deps.db
    .select({ id: workspaces.id, kind: workspaces.kind, name: workspaces.name })
    .from(workspaceMembers)
    .innerJoin(workspaces, eq(workspaces.id, workspaceMembers.workspaceId))
    .where(eq(workspaceMembers.accountId, accountId))
    .orderBy(asc(workspaces.kind), asc(workspaces.name));
}

export async function isMember(deps: Deps, workspaceId: string, accountId: string): Promise<boolean> {
  const [member] = await deps.db
    .select({ a: workspaceMembers.accountId })
    .from(workspaceMembers)
    .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.accountId, accountId)));
  return !!member;
}

export async function seatCount(deps: Deps, workspaceId: string): Promise<number> {
  const [seats] = await deps.db.select({ n: count() }).from(workspaceMembers).where(eq(workspaceMembers.workspaceId, workspaceId));
  return seats!.n;
}
