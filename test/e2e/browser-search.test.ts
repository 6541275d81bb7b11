/**
 * Search in Chromium: a word appended through the API (and indexed: search trails the append's
 * commit by up to 2 s) is found from the notes list's search box, its match in <mark>; after the note is deleted the search no longer finds
 * it. A note holding markup shows it as text. From a folder's list the search stays in that
 * folder. A query without a word says so beside the field.
 * At 390 px nothing overflows; axe-core finds nothing serious in light or dark.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { indexSearchNow } from "../../src/modules/search/indexer";
import { hasChromium, startWebApp, type SignedIn, type WebApp } from "../helpers/browser";

/** The page's globals, inside functions that run in the browser (the project's types have no DOM). */
declare const document: any;
declare const window: any;
declare const axe: any;

const AXE = require.resolve("axe-core/axe.min.js");

let web: WebApp;
let user: SignedIn;

/** Appends a line and waits for the index to take it (search trails the append's commit). */
async function append(filename: string, text: string): Promise<string> {
  const res = await web.api(user.token, "POST", `/api/v1/notes/by-filename/${filename}/append`, { text });
  expect(res.status).toBeLessThan(300);
  await indexSearchNow(web.deps);
  return ((await res.json()) as { id: string }).id;
}

beforeAll(async () => {
  if (!hasChromium) return;
  web = await startWebApp();
  user = await web.signedInPage({ plan: "dev" });
  await append("deploys.log", "deploy 4f2a1c ok in 42s");
}, 60_000);

afterAll(async () => {
  if (hasChromium) await web.close();
});

describe.skipIf(!hasChromium)("search in the browser", () => {
  test("a word appended a moment ago is found from the notes list's box; after the note is deleted it is not", async () => {
    const { page } = user;
    await page.goto(`${web.base}/notes`);
    const id = await append("payments.log", "payment 7781 refused: card expired at checkout");
    const appendedAt = Date.now();
    await page.fill('input[name="q"]', "refused");
    await page.press('input[name="q"]', "Enter");
    await page.waitForURL(`${web.base}/search?q=refused`);
    expect(Date.now() - appendedAt).toBeLessThan(5000);
    const hit = page.locator(`ol.hits a[href="/notes/${id}"]`);
    expect(await hit.count()).toBe(1);
    expect(await hit.locator("strong").textContent()).toBe("payments.log");
    expect(await hit.locator(".snippet").textContent()).toBe("payment 7781 refused: card expired at checkout");
    expect(await hit.locator("mark").allTextContents()).toEqual(["refused"]);
    expect(await page.textContent('[role="status"]')).toBe("1 note matches, best match first.");
    expect(await page.inputValue("#search-q")).toBe("refused");
    await page.screenshot({ path: join(import.meta.dir, "../../docs/screenshots/search.png") });

    expect((await web.api(user.token, "DELETE", `/api/v1/notes/${id}`)).status).toBe(200);
    await page.reload();
    expect(await page.locator("ol.hits a").count()).toBe(0);
    expect(await page.textContent('[role="status"]')).toBe("No note has all of these words.");
    expect(web.violations).toEqual([]);
  });

  test("a note's markup is shown as text, never run; the match is marked in it", async () => {
    const { page } = user;
    const id = await append("xss.log", '<img src=x onerror="window.pwned=1"> <b>bold</b> quetzal');
    await page.goto(`${web.base}/search?q=quetzal`);
    const hit = page.locator(`ol.hits a[href="/notes/${id}"]`);
    expect(await hit.locator(".snippet").textContent()).toBe('<img src=x onerror="window.pwned=1"> <b>bold</b> quetzal');
    expect(await hit.locator(".snippet img, .snippet b").count()).toBe(0);
    expect(await hit.locator("mark").allTextContents()).toEqual(["quetzal"]);
    expect(await page.evaluate(() => window.pwned)).toBeUndefined();
  });

  test("searching from a folder's list searches that folder, with a way to search every note", async () => {
    const { page } = user;
    const folder = (await (await web.api(user.token, "POST", "/api/v1/folders", { folder: { name: "Zoo" } })).json()) as { id: string };
    const inside = await append("inside.log", "okapi inside");
    await append("outside.log", "okapi outside");
    expect((await web.api(user.token, "PATCH", `/api/v1/notes/${inside}`, { note: { folder_id: folder.id } })).status).toBe(200);
    await page.goto(`${web.base}/notes?folder=${folder.id}`);
    await page.fill('input[name="q"]', "okapi");
    await page.press('input[name="q"]', "Enter");
    await page.waitForURL(/\/search\?folder=.*q=okapi/);
    expect(await page.locator("ol.hits a").evaluateAll((links: any[]) => links.map((a) => a.getAttribute("href")))).toEqual([`/notes/${inside}`]);
    expect(await page.locator("ol.hits .meta").nth(1).textContent()).toBe("inside.log · Zoo");
    await page.click("text=search every note");
    await page.waitForURL(`${web.base}/search?q=okapi`);
    expect(await page.locator("ol.hits a").count()).toBe(2);
  });

  test("a query with no word in it is refused beside the field, keeping what was typed", async () => {
    const { page } = user;
    await page.goto(`${web.base}/search`);
    await page.fill("#search-q", '" * -');
    await page.press("#search-q", "Enter");
    await page.waitForURL(/\/search\?q=/);
    expect(await page.inputValue("#search-q")).toBe('" * -');
    expect(await page.getAttribute("#search-q", "aria-invalid")).toBe("true");
    expect(await page.textContent("#search-q-problem")).toBe("The search has no word to search for (letters or digits).");
  });

  for (const colorScheme of ["light", "dark"] as const) {
    test(`at 390 px nothing overflows, and axe-core finds nothing serious or critical, ${colorScheme}`, async () => {
      const context = await web.browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme });
      await context.addCookies(await user.context.cookies());
      await context.addInitScript({ path: AXE });
      const page = await context.newPage();
      try {
        await append("long.log", `a line with a very-long-identifier-${"x".repeat(120)} and the word tamarin`);
        for (const path of ["/search", "/search?q=tamarin", "/search?q=%22"]) {
          expect((await page.goto(`${web.base}${path}`))?.status()).toBe(200);
          expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
          const problems: string[] = await page.evaluate(async () => {
            const r = await axe.run(document, { resultTypes: ["violations"] });
            return r.violations.filter((v: any) => v.impact === "serious" || v.impact === "critical").map((v: any) => `${v.id}: ${v.help}`);
          });
          expect({ path, problems }).toEqual({ path, problems: [] });
        }
      } finally {
        await context.close();
      }
    });
  }
});
