/**
 * The onboarding in Chromium, as a new user meets it: the first sign-in lands on it (once), code
 * mode leaves an active API trial, a stream and a token shown once, with a curl line, a
 * `notestream append` line and an MCP client snippet that each work when pasted, and the first
 * line appears on the page as it arrives; browser mode and skipping go to the notes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Page } from "playwright-core";
import { FIRST_STREAM } from "../../src/modules/accounts/onboarding";
import { getWorkspace } from "../../src/modules/workspaces/repo";
import { AXE, axeProblems, hasChromium, PASSWORD, startWebApp, type WebApp } from "../helpers/browser";
import { tool } from "../helpers/mcp";

/** The page's globals, inside functions that run in the browser (the project's types have no DOM). */
declare const document: any;
declare const window: any;

let web: WebApp;
/** A directory with a `notestream` that runs this checkout, so the pasted commands find one. */
let binDir: string;

beforeAll(async () => {
  if (!hasChromium) return;
  web = await startWebApp();
  binDir = mkdtempSync(join(tmpdir(), "notestream-bin-"));
  writeFileSync(join(binDir, "notestream"), `#!/bin/sh\nexec "${process.execPath}" "${join(import.meta.dir, "..", "..", "src", "main.ts")}" "$@"\n`);
  chmodSync(join(binDir, "notestream"), 0o755);
}, 60_000);

afterAll(async () => {
  if (!hasChromium) return;
  await web?.close();
  rmSync(binDir, { recursive: true, force: true });
});

/** An account that has never signed in with its password, signed in now through the form on a fresh page. */
async function firstSignIn(plan: "free" | "dev" = "free"): Promise<{ page: Page; email: string; workspaceId: string; close: () => Promise<void> }> {
  const made = await web.signedInPage({ plan });
  await made.context.close();
  const { page, context } = await web.newPage();
  await signIn(page, made.account.email);
  return { page, email: made.account.email, workspaceId: made.account.workspaceId, close: () => context.close() };
}

async function signIn(page: Page, email: string) {
  await page.goto(`${web.base}/signin`);
  await page.fill('input[name="email"]', email);
  await page.fill('input[name="password"]', PASSWORD);
  await page.click('button:has-text("Sign in")');
}

/** Runs a pasted command line in a shell, with this checkout's `notestream` on the PATH. */
async function paste(command: string): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn(["sh", "-c", command], { env: { ...process.env, PATH: `${binDir}:${process.env.PATH}` }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out, err };
}

describe.skipIf(!hasChromium)("the onboarding in Chromium", () => {
  test("code mode: an active trial, a stream and a working token shown once; the commands work when pasted and the first line shows up live", async () => {
    const { page, email, workspaceId, close } = await firstSignIn("free");
    await page.waitForURL(`${web.base}/onboarding`);
    await page.click('button.choice:has-text("Sending from code")');
    await page.waitForURL(/\/onboarding\/code\?stream=note_/);

    const ws = await getWorkspace(web.deps, workspaceId);
    expect([ws.state, ws.trialUsed]).toEqual(["trial", true]);
    expect(ws.trialEndsAt! - Date.now()).toBeGreaterThan(13 * 86_400_000);
    const token = await page.inputValue("#new-token");
    expect(token).toMatch(/^nst_\w{32,}$/);
    expect(await page.textContent(".flash.ok")).toContain("API trial has started");

    const curl = await page.inputValue("#snippet-curl");
    const cli = await page.inputValue("#snippet-cli");
    const mcp = JSON.parse(await page.inputValue("#snippet-mcp"));
    for (const s of [curl, cli]) expect(s).toContain(token);
    expect(mcp.mcpServers.notestream.env).toEqual({ NOTESTREAM_URL: web.base, NOTESTREAM_TOKEN: token });

    // Following live before anything is sent: the page waits for the first line.
    await page.waitForSelector("#live-state.on");
    expect(await page.isVisible(".waiting")).toBe(true);
    expect(await page.isVisible(".arrived")).toBe(false);
    expect(await page.locator("pre.stream .ln").count()).toBe(0);

    const sent = await paste(curl);
    expect(sent.code).toBe(0);
    expect(JSON.parse(sent.out)).toMatchObject({ filename: FIRST_STREAM, byte_size: 16 });
    await page.waitForSelector("pre.stream .ln");
    expect(await page.textContent("pre.stream")).toBe("hello from curl\n");
    expect(await page.isVisible(".arrived")).toBe(true);
    expect(await page.isVisible(".waiting")).toBe(false);

    const appended = await paste(cli);
    expect(appended.code).toBe(0);
    await page.waitForFunction(() => document.querySelectorAll("pre.stream .ln").length === 2);
    expect(await page.textContent("pre.stream")).toBe("hello from curl\nhello from notestream\n");

    // The MCP snippet, as a client runs it: the command, its arguments, its environment.
    const server = mcp.mcpServers.notestream;
    const client = new Client({ name: "onboarding-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: join(binDir, server.command), args: server.args, env: { ...(process.env as Record<string, string>), ...server.env }, stderr: "pipe" }));
    try {
      const listed = await tool<{ notes: { filename: string | null; id: string }[] }>(client, "list_notes");
      const stream = listed.notes.find((x) => x.filename === FIRST_STREAM)!;
      expect(stream).toBeDefined();
      const read = await tool<{ plain_body: string }>(client, "read_note", { id: stream.id });
      expect(read.plain_body).toBe("hello from curl\nhello from notestream\n");
    } finally {
      await client.close();
    }

    // Shown once: after a reload the commands carry a placeholder and the token is gone.
    await page.reload();
    expect(await page.locator("#new-token").count()).toBe(0);
    expect(await page.inputValue("#snippet-cli")).toContain("NOTESTREAM_TOKEN=nst_…");
    expect(await page.content()).not.toContain(token);
    expect(await page.locator("pre.stream .ln").count()).toBe(2);
    expect(web.violations).toEqual([]);
    await close();

    // Once per account: the next sign-in goes to the notes.
    const again = await web.newPage();
    await signIn(again.page, email);
    await again.page.waitForURL(`${web.base}/notes`);
    await again.context.close();
  }, 60_000);

  test("browser mode goes to the notes", async () => {
    const { page, workspaceId, close } = await firstSignIn("free");
    await page.waitForURL(`${web.base}/onboarding`);
    await page.click('button.choice:has-text("Writing notes in the browser")');
    await page.waitForURL(`${web.base}/notes`);
    expect(await page.textContent("aside")).toContain("Inbox");
    expect((await getWorkspace(web.deps, workspaceId)).state).toBe("active");
    await page.goto(`${web.base}/settings`);
    expect(await page.textContent("#getting-started")).toContain("mostly for writing in the browser");
    expect(web.violations).toEqual([]);
    await close();
  }, 30_000);

  test("skipping goes to the notes, starts nothing, and the account page leads back to the choice", async () => {
    const { page, email, workspaceId, close } = await firstSignIn("free");
    await page.waitForURL(`${web.base}/onboarding`);
    await page.click('a:has-text("Skip for now")');
    await page.waitForURL(`${web.base}/notes`);
    expect(await getWorkspace(web.deps, workspaceId)).toMatchObject({ state: "active", trialUsed: false });
    await page.goto(`${web.base}/settings`);
    await page.click('#getting-started a[href="/onboarding"]');
    await page.waitForURL(`${web.base}/onboarding`);
    expect(await page.isVisible('button.choice:has-text("Sending from code")')).toBe(true);
    await close();

    const again = await web.newPage();
    await signIn(again.page, email);
    await again.page.waitForURL(`${web.base}/notes`);
    await again.context.close();
  }, 30_000);

  test("on a phone, in light and dark: nothing serious for axe-core, nothing wider than the screen", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      const { page, context } = await web.signedInPage({ plan: "free", width: 390, height: 844, colorScheme });
      await context.addInitScript({ path: AXE });
      await page.goto(`${web.base}/onboarding`);
      expect(await axeProblems(page)).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
      await page.click('button.choice:has-text("Sending from code")');
      await page.waitForURL(/\/onboarding\/code/);
      expect(await axeProblems(page)).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
      await context.close();
    }
    expect(web.violations).toEqual([]);
  }, 30_000);
});
