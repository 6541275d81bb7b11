import { and, count, eq } from "drizzle-orm";
import type { Deps } from "../../deps";
import { workspaceMembers, workspaces } from "../../db/schema";
import { AppError } from "../../http/errors";
import { newId } from "../../lib/ids";
import { findAccountByEmail } from "../accounts/service";

/** A team has 2 to 25 seats; one that has only its owner so far is billed as two. */
export const MAX_SEATS = 25;
export const MIN_SEATS = 2;

export function createTeam(deps: Deps, input: { ownerEmail: string; name: string }): { id: string } {
  const owner = findAccountByEmail(deps, input.ownerEmail);
  if (!owner) throw new AppError("not_found", `no account with e-mail ${input.ownerEmail}`);
  const name = input.name.trim();
  if (!name || name.length > 80) throw new AppError("bad_request", "team name must be 1 to 80 characters");
  const now = deps.clock.now();
  const id = newId("ws");
  deps.db.insert(workspaces).values({ id, kind: "team", name, ownerId: owner.id, plan: "team", createdAt: now }).run();
  deps.db.insert(workspaceMembers).values({ workspaceId: id, accountId: owner.id, role: "owner", createdAt: now }).run();
  return { id };
}

export function addTeamMember(deps: Deps, input: { teamId: string; email: string }): { seats: number } {
  const team = deps.db.select().from(workspaces).where(eq(workspaces.id, input.teamId)).get();
  if (!team || team.kind !== "team") throw new AppError("not_found", `no team with id ${input.teamId}`);
  const account = findAccountByEmail(deps, input.email);
  if (!account) throw new AppError("not_found", `no account with e-mail ${input.email}`);
  if (isMember(deps, team.id, account.id)) throw new AppError("conflict", `${account.email} is already on team ${team.id}`);
  const seats = seatCount(deps, team.id);
  if (seats >= MAX_SEATS) throw new AppError("conflict", `team ${team.id} has all ${MAX_SEATS} seats taken`);
  deps.db
    .insert(workspaceMembers)
    .values({ workspaceId: team.id, accountId: account.id, role: "member", createdAt: deps.clock.now() })
    .run();
  return { seats: seats + 1 };
}

export function isMember(deps: Deps, workspaceId: string, accountId: string): boolean {
  return !!deps.db
    .select({ a: workspaceMembers.accountId })
    .from(workspaceMembers)
    .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.accountId, accountId)))
    .get();
}

export function seatCount(deps: Deps, workspaceId: string): number {
  return deps.db.select({ n: count() }).from(workspaceMembers).where(eq(workspaceMembers.workspaceId, workspaceId)).get()!.n;
}
