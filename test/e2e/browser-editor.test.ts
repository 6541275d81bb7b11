/**
 * A note's page in Chromium: never lose what was typed (a save on leaving, the ended session,
 * the local draft), versions previewed before a restore, the rich editor's link and names, a
 * stream's line times, "last write" and live indicator, and "New note" asking for a title first.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { count, eq, sql } from "drizzle-orm";
import type { Page } from "playwright-core";
import { notes, sessions, snapshots } from "../../src/db/tables";
import { createRichNote } from "../../src/modules/notes/rich";
import { webPrincipal } from "../../src/web/session";
import { hasChromium, PASSWORD, startWebApp, type SignedIn, type WebApp } from "../helpers/browser";

/** The page's globals, inside functions that run in the browser (the project's types have no DOM). */
declare const document: any;
declare const window: any;
declare const localStorage: any;

const AXE = require.resolve("axe-core/axe.min.js");

let web: WebApp;

beforeAll(async () => {
  if (hasChromium) web = await startWebApp();
}, 60_000);

afterAll(async () => {
  if (hasChromium) await web.close();
});

async function apiJson(token: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await web.api(token, method, path, body);
  expect(res.status).toBeLessThan(300);
  return res.json();
}

const plainNote = async (u: SignedIn, title: string, text: string): Promise<string> => (await apiJson(u.token, "POST", "/api/v1/notes", { note: { title, plain_body: text } })).id;

async function richNote(u: SignedIn, title: string, html: string): Promise<string> {
  const ctx = { deps: web.deps, principal: webPrincipal(u.account.id, u.account.workspaceId, Date.now() + 86_400_000) };
  return (await createRichNote({ ctx, title, html })).body.id;
}

/** The note's text as the server has it (a rich note's plain projection). */
const serverText = async (u: SignedIn, id: string): Promise<string> => (await apiJson(u.token, "GET", `/api/v1/notes/${id}`)).plain_body;

/** Polls the server until the note holds `text`, for saves made by a page that is gone. */
async function serverGets(u: SignedIn, id: string, text: string, ms = 5_000): Promise<string> {
  const until = Date.now() + ms;
  let seen = await serverText(u, id);
  while (seen !== text && Date.now() < until) {
    await Bun.sleep(50);
    seen = await serverText(u, id);
  }
  return seen;
}

const statusSays = (page: Page, text: string) =>
  page.waitForFunction((t: string) => (document.getElementById("save-status")?.textContent ?? "").includes(t), text, { timeout: 10_000 });

/** Every dialog the page opens (beforeunload warnings, the link's question), answered as told. */
function dialogs(page: Page, answer: (type: string) => string | null = () => ""): string[] {
  const seen: string[] = [];
  page.on("dialog", (d) => {
    seen.push(d.type());
    const a = answer(d.type());
    void (a === null ? d.dismiss() : d.accept(a));
  });
  return seen;
}

/** axe-core's serious and critical findings on the page as it is (axe comes in as an init script, outside the pages' policy). */
async function axeProblems(page: Page): Promise<string[]> {
  const found: { id: string; impact: string; targets: string[] }[] = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v: any) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n: any) => n.target.join(" ")) }));
  });
  return found.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id} (${v.impact}) at ${v.targets.join(", ")}`);
}

const overflows = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);

describe.skipIf(!hasChromium)("a note's page in Chromium", () => {
  test("text typed and left before the page's own save fires is saved: clicking All notes, and closing the tab", async () => {
    const u = await web.signedInPage({ plan: "dev" });
    const id = await plainNote(u, "Leaving", "before\n");
    // The page's timers on a clock that stands still: neither the draft (300 ms) nor the save
    // (1.2 s) fires by itself, however long the click takes on a busy machine, so what saves the
    // text is leaving the page.
    await u.page.clock.install();
    await u.page.goto(`${web.base}/notes/${id}`);
    await u.page.clock.pauseAt(new Date(Date.now() + 60_000));
    const asked = dialogs(u.page);
    await u.page.fill("textarea", "typed just before leaving\n");
    await u.page.click('aside a:has-text("All notes")', { noWaitAfter: true });
    await u.page.waitForURL(`${web.base}/notes`);
    expect(asked).toEqual([]);
    // The save was handed off (keepalive) as the page left: the browser does not order it before
    // the next page's request, so it may land just after (seen on PostgreSQL, whose commit is a
    // round trip). Saved is what counts; then the page shows it.
    expect(await serverGets(u, id, "typed just before leaving\n")).toBe("typed just before leaving\n");
    await u.page.goto(`${web.base}/notes/${id}`);
    expect(await u.page.inputValue("textarea")).toBe("typed just before leaving\n");

    // Closing the tab (its beforeunload runs: a save handed off with keepalive needs no warning).
    await u.page.fill("textarea", "typed just before closing\n");
    await u.page.close({ runBeforeUnload: true });
    expect(await serverGets(u, id, "typed just before closing\n")).toBe("typed just before closing\n");
    expect(asked).toEqual([]);

    // A rich note the same way.
    const rid = await richNote(u, "Rich leaving", "<p>rich before</p>");
    const page = await u.context.newPage();
    await page.goto(`${web.base}/notes/${rid}`);
    await page.click('[role="textbox"]');
    await page.keyboard.press("End");
    await page.keyboard.type(" and after");
    await page.close({ runBeforeUnload: true });
    expect(await serverGets(u, rid, "rich before and after\n")).toBe("rich before and after\n");
    await u.context.close();
  }, 60_000);

  test("a save after the session ended says so, keeps the text, and Retry saves it once signed in again in a new tab", async () => {
    const u = await web.signedInPage({ plan: "dev" });
    const id = await plainNote(u, "Session", "before\n");
    await u.page.goto(`${web.base}/notes/${id}`);
    // Signed out behind the page's back, in another tab of the same browser.
    const other = await u.context.newPage();
    await other.goto(`${web.base}/settings`);
    await other.click('button:has-text("Sign out")');
    await other.waitForURL(/\/signin/);
    await other.close();

    await u.page.fill("textarea", "written after the session ended\n");
    await statusSays(u.page, "Not saved");
    expect(await u.page.textContent("#save-problem")).toContain("Your session ended");
    expect(await u.page.inputValue("textarea")).toBe("written after the session ended\n");
    const signIn = u.page.locator('a:has-text("Sign in in a new tab")');
    expect(await signIn.getAttribute("target")).toBe("_blank");
    expect(await signIn.getAttribute("href")).toBe(`/signin?next=${encodeURIComponent(`/notes/${id}`)}`);

    // Retry while still signed out says so.
    await u.page.click('#save-problem button:has-text("Retry")');
    await u.page.waitForFunction(() => (document.getElementById("save-problem")?.textContent ?? "").includes("Still signed out"), undefined, { timeout: 10_000 });

    const [tab] = await Promise.all([u.context.waitForEvent("page"), signIn.click()]);
    await tab.waitForLoadState();
    await tab.fill('input[name="email"]', u.account.email);
    await tab.fill('input[name="password"]', PASSWORD);
    await tab.click('button:has-text("Sign in")');
    await tab.waitForURL(`${web.base}/notes/${id}`);
    await tab.close();

    await u.page.click('#save-problem button:has-text("Retry")');
    await statusSays(u.page, "Saved");
    expect(await u.page.isHidden("#save-problem")).toBe(true);
    expect(await serverText(u, id)).toBe("written after the session ended\n");
    // The page's forms carry the new session's token: a move is accepted.
    await u.page.selectOption('select[name="folder_id"]', "");
    await u.page.click('button:has-text("Move")');
    await u.page.waitForURL(/ok=Moved/);
    await u.context.close();
  }, 60_000);

  test("a refused save shows the server's message; an unreachable one says offline", async () => {
    const u = await web.signedInPage({ plan: "dev" });
    const id = await plainNote(u, "Refused", "before\n");
    await u.page.goto(`${web.base}/notes/${id}`);
    // Past the dev plan's note size.
    await u.page.route("**/notes/*/save", (r) =>
      r.request().method() === "POST" ? r.fulfill({ status: 413, contentType: "application/json", body: JSON.stringify({ error: { code: "cap_exceeded", message: "a note may be at most 1 MB on the dev plan" } }) }) : r.continue(),
    );
    await u.page.fill("textarea", "too much\n");
    await statusSays(u.page, "Not saved");
    expect(await u.page.textContent("#save-problem-text")).toBe("Not saved: a note may be at most 1 MB on the dev plan");
    expect(await u.page.isHidden("#save-signin")).toBe(true);
    await u.page.unroute("**/notes/*/save");
    await u.page.route("**/notes/*/save", (r) => r.abort("internetdisconnected"));
    await u.page.fill("textarea", "no network\n");
    await u.page.waitForFunction(() => (document.getElementById("save-problem-text")?.textContent ?? "").startsWith("Offline"), undefined, { timeout: 10_000 });
    await u.page.unroute("**/notes/*/save");
    await u.page.click('#save-problem button:has-text("Retry")');
    await statusSays(u.page, "Saved");
    expect(await serverText(u, id)).toBe("no network\n");
    await u.context.close();
  }, 60_000);

  test("a failed save leaves a draft in the browser: leaving warns, and the next visit offers to restore it", async () => {
    const u = await web.signedInPage({ plan: "dev" });
    const id = await plainNote(u, "Draft", "server text\n");
    // The server refuses every save: the session is gone (a route that fails requests cannot be
    // trusted with the keepalive saves a page sends as it goes away).
    const endSession = () => web.deps.db.delete(sessions).where(eq(sessions.accountId, u.account.id));
    const signInAgain = async () => {
      await u.page.waitForURL(/\/signin\?next=/);
      await u.page.fill('input[name="email"]', u.account.email);
      await u.page.fill('input[name="password"]', PASSWORD);
      await u.page.click('button:has-text("Sign in")');
      await u.page.waitForURL(`${web.base}/notes/${id}`);
    };
    await u.page.goto(`${web.base}/notes/${id}`);
    await endSession();
    await u.page.click("textarea");
    await u.page.fill("textarea", "kept only in this browser\n");
    await statusSays(u.page, "Not saved");
    const asked = dialogs(u.page);
    await u.page.reload();
    expect(asked).toEqual(["beforeunload"]);
    await signInAgain();

    expect(await u.page.inputValue("textarea")).toBe("server text\n");
    expect(await serverText(u, id)).toBe("server text\n");
    expect(await u.page.isVisible("#draft-bar")).toBe(true);
    expect(await u.page.textContent("#draft-text")).toMatch(/^Unsaved text from .+ was kept in this browser\.$/);
    await u.page.click('#draft-bar button:has-text("Restore")');
    expect(await u.page.inputValue("textarea")).toBe("kept only in this browser\n");
    await statusSays(u.page, "Saved");
    expect(await serverText(u, id)).toBe("kept only in this browser\n");
    expect(await u.page.evaluate((k: string) => localStorage.getItem(k), `notestream:draft:${id}`)).toBeNull();
    await u.page.reload();
    expect(await u.page.isHidden("#draft-bar")).toBe(true);

    // Discard drops it for good.
    await endSession();
    await u.page.fill("textarea", "not wanted\n");
    await statusSays(u.page, "Not saved");
    await u.page.reload();
    await signInAgain();
    await u.page.click('#draft-bar button:has-text("Discard")');
    expect(await u.page.isHidden("#draft-bar")).toBe(true);
    await u.page.reload();
    expect(await u.page.isHidden("#draft-bar")).toBe(true);
    expect(await u.page.inputValue("textarea")).toBe("kept only in this browser\n");
    expect(asked).toEqual(["beforeunload", "beforeunload"]);
    await u.context.close();
  }, 60_000);

  test("a draft older than the note's last save is not offered", async () => {
    const u = await web.signedInPage({ plan: "dev" });
    const id = await plainNote(u, "Stale", "first\n");
    await u.page.goto(`${web.base}/notes/${id}`);
    await u.page.evaluate((k: string) => localStorage.setItem(k, JSON.stringify({ payload: JSON.stringify({ title: "Stale", plain_body: "old draft\n" }), at: Date.now() - 3_600_000, base: 1 })), `notestream:draft:${id}`);
    await u.page.reload();
    expect(await u.page.isHidden("#draft-bar")).toBe(true);
    expect(await u.page.evaluate((k: string) => localStorage.getItem(k), `notestream:draft:${id}`)).toBeNull();
    await u.context.close();
  }, 30_000);

  test("an earlier version can be previewed, then restored", async () => {
    const u = await web.signedInPage({ plan: "dev" });
    const id = await plainNote(u, "Versions", "version one\n");
    await apiJson(u.token, "PATCH", `/api/v1/notes/${id}`, { note: { plain_body: "version two\n" } });
    // The next save more than ten minutes later keeps a second version (the specification's debounce).
    await web.deps.db
      .update(snapshots)
      .set({ createdAt: sql`${snapshots.createdAt} - 660000`, lastSaveAt: sql`${snapshots.lastSaveAt} - 660000` })
      .where(eq(snapshots.noteId, id));
    await apiJson(u.token, "PATCH", `/api/v1/notes/${id}`, { note: { plain_body: "version three\n" } });

    await u.page.goto(`${web.base}/notes/${id}`);
    const previews = u.page.locator('a:has-text("Preview")');
    expect(await previews.count()).toBe(2);
    const names = await previews.evaluateAll((els: any[]) => els.map((e) => e.getAttribute("aria-label")));
    expect(new Set(names).size).toBe(2);
    await previews.nth(1).click();
    await u.page.waitForURL(/\/snapshots\/snap_/);
    expect(await u.page.textContent("#version-text")).toBe("version one\n");
    expect(await u.page.textContent("h1")).toContain("Versions");
    expect(await u.page.locator("main time").count()).toBeGreaterThan(0);
    await u.page.click('button:has-text("Restore this version")');
    await u.page.waitForURL(new RegExp(`/notes/${id}\\?ok=`));
    expect(await u.page.inputValue("textarea")).toBe("version one\n");
    expect(await serverText(u, id)).toBe("version one\n");
    // The text it had is a version now, so the restore can be undone.
    expect(await u.page.locator('a:has-text("Preview")').count()).toBe(3);

    // A version that is gone goes back to the note with a message.
    await u.page.goto(`${web.base}/notes/${id}/snapshots/snap_gone0000000000000000`);
    expect(await u.page.textContent(".flash.error")).toContain("no longer kept");
    expect(web.violations).toEqual([]);
    await u.context.close();
  }, 60_000);

  test("the rich editor: a link made from the toolbar survives a reload; buttons, the text and every input are named", async () => {
    const u = await web.signedInPage({ plan: "dev" });
    const id = await richNote(u, "Links", "<p>start</p>");
    await u.page.goto(`${web.base}/notes/${id}`);
    for (const name of ["Bold", "Italic", "Underline", "Heading", "Paragraph", "Bulleted list", "Numbered list", "Quote", "Link"]) {
      expect(await u.page.getByRole("button", { name, exact: true }).count()).toBe(1);
    }
    const text = u.page.getByRole("textbox", { name: "Text" });
    expect(await text.getAttribute("aria-multiline")).toBe("true");
    const unlabelled = await u.page.evaluate(() =>
      [...document.querySelectorAll("input:not([type=hidden]), select, textarea, [contenteditable]")]
        .filter((el: any) => !el.getAttribute("aria-label") && !el.getAttribute("aria-labelledby") && !el.closest("label") && !(el.id && document.querySelector(`label[for="${el.id}"]`)))
        .map((el: any) => el.outerHTML.slice(0, 80)),
    );
    expect(unlabelled).toEqual([]);

    // A scheme the server would strip is refused in the page.
    const answers = ["javascript:alert(1)", "https://example.com/docs"];
    const asked = dialogs(u.page, (type) => (type === "prompt" ? answers.shift()! : ""));
    await text.click();
    await u.page.keyboard.press("End");
    await u.page.keyboard.type(" the docs");
    await u.page.keyboard.press("Shift+Home");
    await u.page.getByRole("button", { name: "Link", exact: true }).click();
    await statusSays(u.page, "Not a link");
    expect(await u.page.locator('[role="textbox"] a').count()).toBe(0);
    await u.page.getByRole("button", { name: "Link", exact: true }).click();
    expect(asked).toEqual(["prompt", "prompt"]);
    await u.page.waitForSelector('[role="textbox"] a[href="https://example.com/docs"]');
    await statusSays(u.page, "Saved");
    await u.page.reload();
    const link = u.page.locator('[role="textbox"] a');
    expect(await link.getAttribute("href")).toBe("https://example.com/docs");
    expect(await link.textContent()).toBe("start the docs");
    // Bold from the toolbar keeps the selection it was given.
    await text.click();
    await u.page.keyboard.press("End");
    await u.page.keyboard.type(" loud");
    for (let i = 0; i < 4; i++) await u.page.keyboard.press("Shift+ArrowLeft");
    await u.page.getByRole("button", { name: "Bold", exact: true }).click();
    expect(await u.page.locator('[role="textbox"] b, [role="textbox"] strong').textContent()).toBe("loud");
    expect(web.violations).toEqual([]);
    await u.context.close();
  }, 60_000);

  test("a stream's lines show their times on request (remembered), and the live tail keeps last write current", async () => {
    const u = await web.signedInPage({ plan: "dev" });
    for (const t of ["first line", "second line"]) await apiJson(u.token, "POST", "/api/v1/notes/by-filename/times.log/append", { text: t });
    const id = (await apiJson(u.token, "GET", "/api/v1/notes/by-filename/times.log")).id;
    // An hour old, so the change shows.
    await web.deps.db.update(notes).set({ lastWriteAt: sql`${notes.lastWriteAt} - 3600000` }).where(eq(notes.id, id));
    await u.page.goto(`${web.base}/notes/${id}`);
    await u.page.waitForFunction(() => document.getElementById("live-state")?.textContent === "Live", undefined, { timeout: 10_000 });
    expect(await u.page.textContent("pre.stream")).toBe("first line\nsecond line\n");
    const before = (await u.page.textContent("#last-write"))!;
    const shown = () => u.page.evaluate(() => [...document.querySelectorAll("pre.stream .ln")].map((l: any) => window.getComputedStyle(l, "::before").content));
    expect((await shown()).every((c: string) => c === "none" || c === "normal")).toBe(true);

    await u.page.check("#show-times");
    const times = await shown();
    expect(times).toHaveLength(2);
    for (const c of times) expect(c).toMatch(/\d\d:\d\d:\d\d/);
    // Times are not part of the text: copying the lines copies the log.
    expect(await u.page.textContent("pre.stream")).toBe("first line\nsecond line\n");
    await u.page.reload();
    expect(await u.page.isChecked("#show-times")).toBe(true);
    await u.page.waitForFunction(() => document.getElementById("live-state")?.textContent === "Live", undefined, { timeout: 10_000 });

    const lastBefore = await u.page.getAttribute("#last-write time", "datetime");
    await apiJson(u.token, "POST", "/api/v1/notes/by-filename/times.log/append", { text: "third line" });
    await u.page.waitForFunction(() => document.querySelector("pre.stream")?.textContent?.includes("third line"), undefined, { timeout: 10_000 });
    const after = await u.page.getAttribute("#last-write time", "datetime");
    expect(after).not.toBe(lastBefore);
    expect(Date.now() - Date.parse(after!)).toBeLessThan(60_000);
    expect(await u.page.textContent("#last-write")).not.toBe(before);
    expect((await shown())[2]).toMatch(/\d\d:\d\d:\d\d/);

    await u.page.uncheck("#show-times");
    await u.page.reload();
    expect(await u.page.isChecked("#show-times")).toBe(false);
    expect(web.violations).toEqual([]);
    await u.context.close();
  }, 60_000);

  test("New note asks for a title first: an empty one is refused in place, nothing is created until it is given", async () => {
    const u = await web.signedInPage({ plan: "free" });
    await u.page.goto(`${web.base}/notes`);
    await u.page.fill('aside input[name="name"]', "Work");
    await u.page.click('aside button:has-text("Add")');
    await u.page.waitForURL(/folder=/);
    await u.page.click('a:has-text("New rich note")');
    await u.page.waitForURL(/\/notes\/new\?format=rich&folder=/);
    expect(await u.page.isChecked('input[name="format"][value="rich"]')).toBe(true);
    expect(await u.page.textContent('select[name="folder_id"] option:checked')).toBe("Work");

    await u.page.fill('input[name="title"]', "   ");
    await u.page.click('button:has-text("Create note")');
    expect(await u.page.textContent(".field-error")).toBe("Give the note a title.");
    expect(await u.page.getAttribute('input[name="title"]', "aria-invalid")).toBe("true");
    expect(await u.page.isChecked('input[name="format"][value="rich"]')).toBe(true);
    expect(await u.page.textContent('select[name="folder_id"] option:checked')).toBe("Work");
    const noteCount = async () => (await web.deps.db.select({ n: count() }).from(notes).where(eq(notes.workspaceId, u.account.workspaceId)))[0]!.n;
    expect(await noteCount()).toBe(0);

    await u.page.fill('input[name="title"]', "Quarterly plan");
    await u.page.click('button:has-text("Create note")');
    await u.page.waitForURL(/\/notes\/note_/);
    expect(await u.page.inputValue("#title")).toBe("Quarterly plan");
    expect(await u.page.locator('[role="textbox"]').count()).toBe(1);
    expect(await u.page.textContent("aside a.on")).toContain("Work");
    expect(await noteCount()).toBe(1);

    // A title past 200 characters (the field's maxlength bypassed) is refused beside it too.
    await u.page.goto(`${web.base}/notes/new`);
    await u.page.evaluate(() => document.querySelector('input[name="title"]').removeAttribute("maxlength"));
    await u.page.fill('input[name="title"]', "x".repeat(201));
    await u.page.click('button:has-text("Create note")');
    expect(await u.page.textContent(".field-error")).toContain("200 characters");
    expect(await u.page.inputValue('input[name="title"]')).toBe("x".repeat(201));
    expect(await noteCount()).toBe(1);
    expect(web.violations).toEqual([]);
    await u.context.close();
  }, 60_000);

  test("the new pages and the editor's messages: nothing serious for axe-core, nothing wider than a phone", async () => {
    const u = await web.signedInPage({ plan: "dev", width: 390, height: 844 });
    await u.context.addInitScript({ path: AXE });
    const id = await plainNote(u, "Checked", "one\n");
    await apiJson(u.token, "PATCH", `/api/v1/notes/${id}`, { note: { plain_body: "two\n" } });
    const snap = (await apiJson(u.token, "GET", `/api/v1/notes/${id}/snapshots`))[0].id;
    for (const scheme of ["light", "dark"] as const) {
      await u.page.emulateMedia({ colorScheme: scheme });
      await u.page.goto(`${web.base}/notes/new`);
      await u.page.click('button:has-text("Create note")');
      expect(await u.page.isVisible(".field-error")).toBe(true);
      expect({ scheme, page: "new note", axe: await axeProblems(u.page), wide: await overflows(u.page) }).toEqual({ scheme, page: "new note", axe: [], wide: false });
      await u.page.goto(`${web.base}/notes/${id}/snapshots/${snap}`);
      expect({ scheme, page: "version", axe: await axeProblems(u.page), wide: await overflows(u.page) }).toEqual({ scheme, page: "version", axe: [], wide: false });
      // The note with a save problem and a draft offer on show.
      await u.page.goto(`${web.base}/notes/${id}`);
      await u.page.evaluate(() => {
        document.getElementById("save-problem").hidden = false;
        document.getElementById("save-signin").hidden = false;
        document.getElementById("save-problem-text").textContent = "Your session ended, so this was not saved.";
        document.getElementById("draft-bar").hidden = false;
        document.getElementById("draft-text").textContent = "Unsaved text from 1 Mar 2025, 14:05 was kept in this browser.";
      });
      expect({ scheme, page: "note", axe: await axeProblems(u.page), wide: await overflows(u.page) }).toEqual({ scheme, page: "note", axe: [], wide: false });
    }
    await apiJson(u.token, "POST", "/api/v1/notes/by-filename/checked.log/append", { text: "a line" });
    const stream = (await apiJson(u.token, "GET", "/api/v1/notes/by-filename/checked.log")).id;
    await u.page.goto(`${web.base}/notes/${stream}`);
    await u.page.check("#show-times");
    await u.page.waitForFunction(() => document.getElementById("live-state")?.textContent === "Live", undefined, { timeout: 10_000 });
    expect({ page: "stream", axe: await axeProblems(u.page), wide: await overflows(u.page) }).toEqual({ page: "stream", axe: [], wide: false });
    expect(web.violations).toEqual([]);
    await u.context.close();
  }, 60_000);
});
