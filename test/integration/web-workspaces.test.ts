/**
 * The browser's team workspaces: the header's switcher moves a session between the personal
 * workspace and the teams its account belongs to (a CSRF-checked form, membership checked), and
 * someone taken off a team is back in their personal workspace on their next request.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { sessions } from "../../src/db/tables";
import { sha256Hex } from "../../src/lib/secrets";
import { teamRemove } from "../../src/cli/commands";
import { removeTeamMember, seatCount } from "../../src/modules/teams/service";
import { sessionBrowser } from "../helpers/form-browser";
import { harness, type Harness } from "../helpers/harness";

let h: Harness;
beforeEach(async () => {
  h = await harness();
});
afterEach(() => h.close());

/** A signed-in browser, and the workspace its session row holds. */
async function browserOf(email: string) {
  const b = await sessionBrowser(h, email);
  const storedWorkspace = async () => (await h.deps.db.select().from(sessions).where(eq(sessions.idHash, sha256Hex(b.secret))))[0]!.workspaceId;
  return { get: b.get, post: b.form, csrf: b.csrf, storedWorkspace };
}

async function noteIn(a: { accountId: string; workspaceId: string }, title: string) {
  const res = await h.request("POST", "/api/v1/notes", { token: await h.token(a), body: { note: { title } } });
  expect(res.status).toBe(201);
}

/** An owner and a member of a team, each with a note in their personal workspace, and the team with one. */
async function teamOfTwo() {
  const owner = await h.account("team");
  const member = await h.account("dev");
  const teamId = await h.team(owner.email, [member.email]);
  await noteIn(owner, "Owner private note");
  await noteIn(member, "Member private note");
  await noteIn({ accountId: owner.accountId, workspaceId: teamId }, "Team runbook");
  return { owner, member, teamId };
}

describe("the workspace switcher", () => {
  test("an account on no team has no switcher; a member sees personal and the team", async () => {
    const solo = await h.account("dev");
    expect((await (await browserOf(solo.email)).get("/notes")).text).not.toContain('action="/workspace"');
    const { member, teamId } = await teamOfTwo();
    const page = (await (await browserOf(member.email)).get("/notes")).text;
    expect(page).toContain('action="/workspace"');
    expect(page).toContain(`<option value="${member.workspaceId}" selected>Personal</option>`);
    expect(page).toContain(`<option value="${teamId}" >Team</option>`);
  });

  test("switching to the team shows its notes and plan; switching back shows the member's own", async () => {
    const { member, teamId } = await teamOfTwo();
    const b = await browserOf(member.email);
    expect((await b.get("/notes")).text).toContain("Member private note");

    const switched = await b.post("/workspace", { _csrf: b.csrf, workspace_id: teamId, next: "/settings" });
    expect(switched.status).toBe(303);
    expect(switched.location).toStartWith("/settings?ok=");
    expect(await b.storedWorkspace()).toBe(teamId);
    const notes = (await b.get("/notes")).text;
    expect(notes).toContain("Team runbook");
    expect(notes).not.toContain("Member private note");
    expect((await b.get("/settings")).text).toContain("<strong>team</strong>");

    await b.post("/workspace", { _csrf: b.csrf, workspace_id: member.workspaceId });
    const back = (await b.get("/notes")).text;
    expect(back).toContain("Member private note");
    expect(back).not.toContain("Team runbook");
  });

  test("a workspace the account is not a member of is refused and the session stays where it was", async () => {
    const { owner, teamId } = await teamOfTwo();
    const outsider = await h.account("dev");
    const b = await browserOf(outsider.email);
    for (const foreign of [teamId, owner.workspaceId, "ws_nosuchworkspace"]) {
      const r = await b.post("/workspace", { _csrf: b.csrf, workspace_id: foreign });
      expect(r.status).toBe(303);
      expect(decodeURIComponent(r.location)).toContain("/notes?error=You are not a member of that workspace.");
      expect(await b.storedWorkspace()).toBe(outsider.workspaceId);
    }
    expect((await b.get("/notes")).text).not.toContain("Team runbook");
  });

  test("a switch without the page's CSRF token is refused", async () => {
    const { member, teamId } = await teamOfTwo();
    const b = await browserOf(member.email);
    expect((await b.post("/workspace", { workspace_id: teamId })).status).toBe(403);
    expect((await b.post("/workspace", { _csrf: "x".repeat(b.csrf.length), workspace_id: teamId })).status).toBe(403);
    expect(await b.storedWorkspace()).toBe(member.workspaceId);
  });

  test("an unknown next= leads to the notes, never elsewhere", async () => {
    const { member, teamId } = await teamOfTwo();
    const b = await browserOf(member.email);
    const r = await b.post("/workspace", { _csrf: b.csrf, workspace_id: teamId, next: "https://evil.example/" });
    expect(r.location).toStartWith("/notes?ok=");
  });
});

describe("leaving a team", () => {
  test("a member taken off the team is back in their personal workspace on the next request, and their team tokens end", async () => {
    const { member, teamId } = await teamOfTwo();
    const teamToken = await h.token({ accountId: member.accountId, workspaceId: teamId });
    const b = await browserOf(member.email);
    await b.post("/workspace", { _csrf: b.csrf, workspace_id: teamId });
    expect((await b.get("/notes")).text).toContain("Team runbook");
    expect((await h.request("GET", "/api/v1/notes", { token: teamToken })).status).toBe(200);

    await h.deps.writer.write(() => removeTeamMember(h.deps, { teamId, email: member.email }));

    const page = (await b.get("/notes")).text;
    expect(page).toContain("Member private note");
    expect(page).not.toContain("Team runbook");
    expect(page).not.toContain('action="/workspace"');
    await h.settle();
    expect(await b.storedWorkspace()).toBe(member.workspaceId);
    expect((await b.post("/workspace", { _csrf: b.csrf, workspace_id: teamId })).location).toContain("error=");
    expect((await h.request("GET", "/api/v1/notes", { token: teamToken })).status).toBe(401);
  });

  test("the owner stays on the team; someone not on it cannot be removed", async () => {
    const { owner, teamId } = await teamOfTwo();
    const outsider = await h.account("dev");
    await expect(h.deps.writer.write(() => removeTeamMember(h.deps, { teamId, email: owner.email }))).rejects.toThrow(/owns team/);
    await expect(h.deps.writer.write(() => removeTeamMember(h.deps, { teamId, email: outsider.email }))).rejects.toThrow(/not a member/);
    await expect(h.deps.writer.write(() => removeTeamMember(h.deps, { teamId: owner.workspaceId, email: owner.email }))).rejects.toThrow(/no team/);
  });

  test("notestream team remove takes the member off and says how many seats are left", async () => {
    const { member, teamId } = await teamOfTwo();
    const lines: string[] = [];
    await teamRemove(h.deps, ["--team", teamId, "--email", member.email], { out: (l) => void lines.push(l), info: () => {} });
    expect(lines).toEqual(["1"]);
    expect(await seatCount(h.deps, teamId)).toBe(1);
  });
});
