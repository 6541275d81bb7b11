/**
 * Team workspaces in the browser: a member of a team switches to it in the header, sees the
 * team's notes, and switches back; taken off the team, the next page is their personal workspace.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { addTeamMember, createTeam, removeTeamMember } from "../../src/modules/teams/service";
import { mintToken } from "../../src/modules/tokens/service";
import { hasChromium, startWebApp, type SignedIn, type WebApp } from "../helpers/browser";

declare const document: any;
declare const axe: any;

let web: WebApp;
let owner: SignedIn;
let member: SignedIn;
let teamId = "";

const mainText = async (page: Page) => (await page.textContent("main")) ?? "";

beforeAll(async () => {
  if (!hasChromium) return;
  web = await startWebApp();
  owner = await web.signedInPage({ plan: "team" });
  member = await web.signedInPage({ plan: "dev" });
  teamId = (await web.deps.writer.write(() => createTeam(web.deps, { ownerEmail: owner.account.email, name: "Ops team" }))).id;
  await web.deps.writer.write(() => addTeamMember(web.deps, { teamId, email: member.account.email }));
  const teamToken = (await web.deps.writer.write(() => mintToken(web.deps, { accountId: owner.account.id, workspaceId: teamId, scopes: ["read", "write"] }))).token;
  expect((await web.api(teamToken, "POST", "/api/v1/notes", { note: { title: "Team runbook", plain_body: "Page the on-call first." } })).status).toBe(201);
  expect((await web.api(member.token, "POST", "/api/v1/notes", { note: { title: "Member scratchpad" } })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  if (hasChromium) await web?.close();
});

describe.skipIf(!hasChromium)("the workspace switcher", () => {
  test("a member switches to the team, sees the team's note, and switches back", async () => {
    const page = member.page;
    await page.goto(`${web.base}/notes`);
    expect(await mainText(page)).toContain("Member scratchpad");
    expect(await mainText(page)).not.toContain("Team runbook");
    expect(await page.inputValue("#workspace-choice")).toBe(member.account.workspaceId);

    await page.selectOption("#workspace-choice", { label: "Ops team" });
    await page.click('form.switcher button:has-text("Switch")');
    await page.waitForURL(/\/notes\?ok=/);
    expect(await page.textContent(".flash.ok")).toContain("Ops team");
    expect(await page.inputValue("#workspace-choice")).toBe(teamId);
    expect(await mainText(page)).toContain("Team runbook");
    expect(await mainText(page)).not.toContain("Member scratchpad");
    await page.click('a:has-text("Team runbook")');
    await page.waitForURL(/\/notes\/note_/);
    expect(await page.inputValue("textarea")).toBe("Page the on-call first.");

    // From the account page the switch stays on the account page, now the personal workspace's.
    await page.goto(`${web.base}/settings`);
    expect(await mainText(page)).toContain("team");
    await page.selectOption("#workspace-choice", { label: "Personal" });
    await page.click('form.switcher button:has-text("Switch")');
    await page.waitForURL(/\/settings\?ok=/);
    expect(await mainText(page)).toContain("dev");
    await page.goto(`${web.base}/notes`);
    expect(await mainText(page)).toContain("Member scratchpad");
    expect(await mainText(page)).not.toContain("Team runbook");
    expect(web.violations).toEqual([]);
  }, 60_000);

  test("the switcher is labelled, fits a phone, and an account on no team has none", async () => {
    const { context, page } = await web.newPage({ width: 390, height: 844 });
    await context.addCookies(await member.context.cookies());
    await context.addInitScript({ path: require.resolve("axe-core/axe.min.js") });
    await page.goto(`${web.base}/notes`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await page.getByLabel("Workspace").count()).toBe(1);
    const serious = await page.evaluate(async () => {
      const r = await axe.run(document.querySelector("header"));
      return r.violations.filter((v: any) => v.impact === "serious" || v.impact === "critical").map((v: any) => v.id);
    });
    expect(serious).toEqual([]);
    await context.close();

    const solo = await web.signedInPage({ plan: "dev" });
    await solo.page.goto(`${web.base}/notes`);
    expect(await solo.page.locator("#workspace-choice").count()).toBe(0);
    await solo.context.close();
  }, 30_000);

  test("taken off the team while in it, the member's next page is their personal workspace", async () => {
    const page = member.page;
    await page.goto(`${web.base}/notes`);
    await page.selectOption("#workspace-choice", { label: "Ops team" });
    await page.click('form.switcher button:has-text("Switch")');
    await page.waitForURL(/\/notes\?ok=/);
    expect(await mainText(page)).toContain("Team runbook");

    await web.deps.writer.write(() => removeTeamMember(web.deps, { teamId, email: member.account.email }));
    await page.reload();
    expect(await mainText(page)).toContain("Member scratchpad");
    expect(await mainText(page)).not.toContain("Team runbook");
    expect(await page.locator("#workspace-choice").count()).toBe(0);
  }, 30_000);
});
