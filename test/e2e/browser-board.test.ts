/**
 * The notes list as a status board, in Chromium: a Dev account with a stream written just now, a
 * late one and a full one; the board says ok, late and full; "Needs attention" (a bookmarkable
 * ?show=) lists the late and the full ones only; an append through the API while the page is open
 * updates that row's size and last write without a reload; at 390 px nothing overflows; axe-core
 * finds nothing serious in light or dark.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import type { Page } from "playwright-core";
import { notes } from "../../src/db/tables";
import { runTask } from "../../src/schedule";
import { hasChromium, startWebApp, type SignedIn, type WebApp } from "../helpers/browser";

/** The page's globals, inside functions that run in the browser (the project's types have no DOM). */
declare const document: any;
declare const window: any;
declare const axe: any;

const AXE = require.resolve("axe-core/axe.min.js");
const MB = 1024 * 1024;

let web: WebApp;
let user: SignedIn;
const ids = { fresh: "", late: "", full: "" };

async function append(filename: string, text: string): Promise<Response> {
  return web.api(user.token, "POST", `/api/v1/notes/by-filename/${filename}/append`, { text });
}

async function stream(filename: string, text: string): Promise<string> {
  const res = await append(filename, text);
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

beforeAll(async () => {
  if (!hasChromium) return;
  web = await startWebApp();
  user = await web.signedInPage({ plan: "dev" });
  const arm = async (id: string) =>
    expect((await web.api(user.token, "PATCH", `/api/v1/notes/${id}`, { note: { expected_interval_seconds: 3600 } })).status).toBe(200);

  // Late: armed an hour ago, last written two hours ago; the dead-man sweep finds it past due.
  ids.late = await stream("late.log", "nightly backup ok");
  await arm(ids.late);
  const now = Date.now();
  await web.deps.writer.write(async () => {
    await web.deps.db.update(notes).set({ lastWriteAt: now - 2 * 3600_000, deadmanDueAt: now - 3600_000 }).where(eq(notes.id, ids.late));
  });
  await runTask(web.deps, "deadman");

  // Full: filled to the Dev plan's 3 MB through the API; the next line is refused.
  ids.full = await stream("full.log", "x".repeat(MB - 1));
  for (let i = 0; i < 2; i++) expect((await append("full.log", "x".repeat(MB - 1))).status).toBe(200);
  expect((await append("full.log", "one line too many")).status).toBe(403);

  ids.fresh = await stream("fresh.log", "deploy 4f2a1c ok");
  await arm(ids.fresh);
}, 60_000);

afterAll(async () => {
  if (hasChromium) await web?.close();
});

const row = (id: string) => `[data-board-row="${id}"]`;

async function health(page: Page, id: string): Promise<string | null> {
  return page.textContent(`${row(id)} [data-health]`);
}

async function shownRows(page: Page): Promise<string[]> {
  return page.$$eval("[data-board-row]", (els: any[]) => els.map((e) => e.getAttribute("data-board-row")));
}

describe.skipIf(!hasChromium)("the status board in Chromium", () => {
  test("shows ok, late and full, each stream's fill, and an h1", async () => {
    const { page } = user;
    await page.goto(`${web.base}/notes`);
    expect(await page.textContent("h1")).toBe("Notes");
    expect(await health(page, ids.fresh)).toBe("ok");
    expect(await health(page, ids.late)).toBe("late");
    expect(await health(page, ids.full)).toBe("full");
    expect(await page.textContent(`${row(ids.full)} .b-size`)).toBe("3 MB of 3 MB");
    expect(await page.getAttribute(`${row(ids.full)} meter`, "aria-label")).toBe("full.log: 100% of its size cap");
    expect(await page.textContent(`${row(ids.fresh)} [data-webhook]`)).toBe("none");
    expect(await page.textContent(`${row(ids.fresh)} [data-inbox]`)).toBe("off");
    // times.js made the last write relative.
    expect(await page.textContent(`${row(ids.fresh)} time`)).toBe("just now");
    expect(await page.textContent(`${row(ids.late)} time`)).toBe("2 hours ago");
    expect(web.violations).toEqual([]);
  });

  test("Needs attention lists the late and the full stream, not the fresh one, and can be bookmarked", async () => {
    const { page } = user;
    await page.goto(`${web.base}/notes`);
    expect(await page.textContent('[data-board-count="attention"]')).toBe("2");
    expect(await page.textContent('[data-board-count="all"]')).toBe("3");
    await page.click('a:has-text("Needs attention")');
    await page.waitForURL(`${web.base}/notes?show=attention`);
    expect((await shownRows(page)).sort()).toEqual([ids.late, ids.full].sort());
    expect(await page.getAttribute('a:has-text("Needs attention")', "aria-current")).toBe("page");
    // The bookmark opens the same view.
    await page.goto(`${web.base}/notes?show=attention`);
    expect((await shownRows(page)).sort()).toEqual([ids.late, ids.full].sort());
    await page.click('a:has-text("Streams")');
    await page.waitForURL(`${web.base}/notes?show=streams`);
    expect((await shownRows(page)).length).toBe(3);
  });

  test("an append through the API while the page is open updates that row's size and last write, without a reload", async () => {
    const { page } = user;
    const polls: string[] = [];
    const onRequest = (r: { url(): string }) => void polls.push(new URL(r.url()).pathname);
    page.on("request", onRequest);
    // The page's own timers on a clock the test moves: its next poll comes when the append is in, not ten seconds later.
    await page.clock.install();
    await page.goto(`${web.base}/notes`);
    await page.evaluate(() => {
      window.boardMarker = "same page";
    });
    const before = await page.getAttribute(`${row(ids.fresh)} time`, "datetime");
    expect(await page.textContent(`${row(ids.fresh)} .b-size`)).toBe("17 B of 3 MB");
    const lateSig = await page.getAttribute(row(ids.late), "data-sig");
    // The stored times have millisecond precision: a second apart, the new write's time differs.
    await Bun.sleep(1100);
    const line = "deploy 5b3e2d ok, 1043 files";
    expect((await append("fresh.log", line)).status).toBe(200);
    const grown = `${17 + Buffer.byteLength(line) + 1} B of 3 MB`;
    await page.clock.fastForward(10_000);
    await page.waitForFunction(
      ([sel, text]: string[]) => document.querySelector(sel)?.textContent === text,
      [`${row(ids.fresh)} .b-size`, grown],
      { timeout: 20_000, polling: 250 },
    );
    expect(await page.getAttribute(`${row(ids.fresh)} time`, "datetime")).not.toBe(before);
    expect(await page.textContent(`${row(ids.fresh)} time`)).toBe("just now");
    expect(await page.evaluate(() => window.boardMarker)).toBe("same page");
    // Rows that did not change stay as they were.
    expect(await page.getAttribute(row(ids.late), "data-sig")).toBe(lateSig);
    page.off("request", onRequest);
    expect(polls.filter((p) => p === "/notes/board.json").length).toBeGreaterThanOrEqual(1);
    expect(polls.filter((p) => p === "/notes").length).toBe(1);
    expect(polls.filter((p) => p.endsWith("/events"))).toEqual([]);
    expect(web.violations).toEqual([]);
  }, 30_000);

  test("at 390 px the rows stack without horizontal overflow", async () => {
    const { page, context } = await web.newPage({ width: 390, height: 844 });
    await context.addCookies(await user.context.cookies());
    for (const path of ["/notes", "/notes?show=attention"]) {
      await page.goto(`${web.base}${path}`);
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      // Stacked: the size cell sits below the title, not beside it.
      const title = await page.locator(`${row(ids.full)} .b-title`).boundingBox();
      const fill = await page.locator(`${row(ids.full)} .b-fill`).boundingBox();
      expect(fill!.y).toBeGreaterThan(title!.y + title!.height - 1);
    }
    await context.close();
  });

  for (const colorScheme of ["light", "dark"] as const) {
    test(`axe-core finds nothing serious or critical on the board, ${colorScheme}`, async () => {
      const context = await web.browser.newContext({ viewport: { width: 1280, height: 820 }, colorScheme });
      await context.addCookies(await user.context.cookies());
      await context.addInitScript({ path: AXE });
      const page = await context.newPage();
      for (const path of ["/notes", "/notes?show=attention"]) {
        await page.goto(`${web.base}${path}`);
        const found: { id: string; impact: string; targets: string[] }[] = await page.evaluate(async () => {
          const r = await axe.run(document, { resultTypes: ["violations"] });
          return r.violations.map((v: any) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n: any) => n.target.join(" ")) }));
        });
        expect(found.filter((v) => v.impact === "serious" || v.impact === "critical")).toEqual([]);
      }
      await context.close();
    });
  }
});
