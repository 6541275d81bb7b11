/**
 * Every page on a 390 px phone and to axe-core, in light and dark: no horizontal overflow, an h1,
 * no serious or critical accessibility violation; the light/dark toggle, kept per browser and
 * applied before the page is painted; times relative and in the browser's time zone, with UTC on
 * hover. Also writes the mobile and dark screenshots the README shows (docs/screenshots/).
 *
 * axe-core is injected as an init script (the DevTools protocol's, which the pages'
 * Content-Security-Policy does not govern), so the pages run under their real policy here too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { createRichNote } from "../../src/modules/notes/rich";
import { mintToken } from "../../src/modules/tokens/service";
import { webPrincipal } from "../../src/web/session";
import { hasChromium, startWebApp, type SignedIn, type WebApp } from "../helpers/browser";

/** The page's globals, inside functions that run in the browser (the project's types have no DOM). */
declare const document: any;
declare const window: any;
declare const axe: any;

const AXE = require.resolve("axe-core/axe.min.js");
const SHOTS = join(import.meta.dir, "..", "..", "docs", "screenshots");
const PHONE = { width: 390, height: 844 };

let web: WebApp;
let user: SignedIn;
const ids = { plain: "", rich: "", stream: "" };

interface Visit {
  name: string;
  path: string;
  signedIn: boolean;
  status?: number;
}
let visits: Visit[] = [];

/** A context of its own (own colour scheme, size, zone), signed in as `user` or not, with axe at hand and CSP violations collected. */
async function contextFor(o: { signedIn: boolean; colorScheme?: "light" | "dark"; width?: number; height?: number; timezoneId?: string; locale?: string; javaScriptEnabled?: boolean }) {
  const context = await web.browser.newContext({
    viewport: { width: o.width ?? 1280, height: o.height ?? 820 },
    colorScheme: o.colorScheme ?? "light",
    timezoneId: o.timezoneId,
    locale: o.locale,
    javaScriptEnabled: o.javaScriptEnabled ?? true,
  });
  if (o.signedIn) await context.addCookies(await user.context.cookies());
  await context.addInitScript({ path: AXE });
  const page = await context.newPage();
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) web.violations.push(m.text());
  });
  return { context, page };
}

/** axe's serious and critical findings on the page as it is, one line each. */
async function axeProblems(page: Page): Promise<string[]> {
  const found: { id: string; impact: string; help: string; nodes: { target: string[]; failureSummary: string }[] }[] = await page.evaluate(async () => {
    const r = await axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n: any) => ({ target: n.target, failureSummary: n.failureSummary })) }));
  });
  return found
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${v.help} at ${n.target.join(" ")}: ${n.failureSummary.replace(/\s+/g, " ")}`));
}

async function overflow(page: Page): Promise<string | null> {
  return page.evaluate(() => {
    const width = window.innerWidth;
    if (document.documentElement.scrollWidth <= width) return null;
    const wide = [...document.querySelectorAll("body *")]
      .filter((el: any) => el.getBoundingClientRect().right > width + 0.5)
      .slice(0, 5)
      .map((el: any) => `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${el.className ? "." + String(el.className).split(" ").join(".") : ""} (right ${Math.round(el.getBoundingClientRect().right)})`);
    return `scrollWidth ${document.documentElement.scrollWidth} > ${width}: ${wide.join(", ")}`;
  });
}

async function visit(page: Page, v: Visit): Promise<void> {
  const res = await page.goto(`${web.base}${v.path}`);
  expect(res?.status()).toBe(v.status ?? 200);
}

beforeAll(async () => {
  if (!hasChromium) return;
  web = await startWebApp();
  user = await web.signedInPage({ plan: "dev", email: "robin.example-with-a-rather-long-address@example.com" });
  const ctx = { deps: web.deps, principal: webPrincipal(user.account.id, user.account.workspaceId, Date.now() + 86_400_000) };
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await web.api(user.token, method, path, body);
    expect(res.status).toBeLessThan(300);
    return (await res.json()) as any;
  };
  ids.plain = (await api("POST", "/api/v1/notes", { note: { title: "Runbook", plain_body: "1. Check the queue\n2. Restart the worker\nhttps://grafana.example.com/d/aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789/very-long-dashboard-name?orgId=1&from=now-24h\n" } })).id;
  ids.rich = (
    await createRichNote({ ctx, title: "Release checklist", html: "<h2>Before</h2><ul><li>Freeze <strong>main</strong></li><li>Tag the release</li></ul><blockquote>Ship on Tuesdays.</blockquote>" })
  ).body.id;
  const long = `GET /api/v1/reports/${"x".repeat(180)} took 2.3 s`;
  for (const text of ["deploy 4f2a1c ok in 42s", "payment received: 42.00 EUR", long]) await api("POST", "/api/v1/notes/by-filename/deploys.log/append", { text });
  ids.stream = (await api("GET", "/api/v1/notes/by-filename/deploys.log")).id;
  await api("PATCH", `/api/v1/notes/${ids.stream}`, { note: { webhook_url: "https://hooks.example.invalid/services/T000000/B000000/XXXXXXXXXXXXXXXXXXXXXXXX" } });
  await api("POST", "/api/v1/notes/by-filename/deploys.log/append", { text: "after the webhook" });
  const trashed = (await api("POST", "/api/v1/notes", { note: { title: "Old draft" } })).id;
  await api("DELETE", `/api/v1/notes/${trashed}`);
  await web.deps.writer.write(() => mintToken(web.deps, { accountId: user.account.id, workspaceId: user.account.workspaceId, scopes: ["append"], name: "laptop" }));
  // An API error for the account page's log.
  expect((await web.api(user.token, "GET", "/api/v1/notes/note_doesnotexist00000")).status).toBe(404);

  visits = [
    { name: "sign-in", path: "/signin", signedIn: false },
    { name: "sign-up", path: "/signup", signedIn: false },
    { name: "resend confirmation", path: "/confirm/resend", signedIn: false },
    { name: "reset password", path: "/reset", signedIn: false },
    { name: "notes list", path: "/notes", signedIn: true },
    { name: "trash", path: "/trash", signedIn: true },
    { name: "plain note", path: `/notes/${ids.plain}`, signedIn: true },
    { name: "rich note", path: `/notes/${ids.rich}`, signedIn: true },
    { name: "stream", path: `/notes/${ids.stream}`, signedIn: true },
    { name: "stream settings", path: `/notes/${ids.stream}/settings`, signedIn: true },
    { name: "tokens", path: "/settings/tokens", signedIn: true },
    { name: "account", path: "/settings", signedIn: true },
    { name: "access", path: "/settings/access", signedIn: true },
    { name: "missing note", path: "/notes/note_doesnotexist00000", signedIn: true, status: 404 },
  ];
  // Pages other parts of the web app add: checked here once they are served as pages.
  for (const [name, path, status] of [
    ["export", "/settings/export", 200],
    ["search", "/search?q=deploy", 200],
    ["new note", "/notes/new", 200],
    ["connected apps", "/settings/apps", 200],
    ["account deletion", "/settings/delete", 200],
    ["unknown page", "/no-such-page", 404],
  ] as const) {
    const res = await fetch(`${web.base}${path}`, { headers: { cookie: (await user.context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ") }, redirect: "manual" });
    if (res.status === status && res.headers.get("content-type")?.startsWith("text/html")) visits.push({ name, path, signedIn: true, status });
  }
  mkdirSync(SHOTS, { recursive: true });
}, 90_000);

afterAll(async () => {
  if (hasChromium) await web?.close();
});

describe.skipIf(!hasChromium)("every page on a phone", () => {
  test("no page is wider than a 390 px screen, and each has an h1", async () => {
    const problems: string[] = [];
    for (const signedIn of [false, true]) {
      const { context, page } = await contextFor({ signedIn, ...PHONE });
      for (const v of visits.filter((x) => x.signedIn === signedIn)) {
        await visit(page, v);
        const wide = await overflow(page);
        if (wide) problems.push(`${v.name}: ${wide}`);
        if ((await page.locator("h1").count()) === 0) problems.push(`${v.name}: no h1`);
      }
      await context.close();
    }
    expect(problems).toEqual([]);
    expect(web.violations).toEqual([]);
  }, 120_000);

  test("a new token and a new inbox URL stay inside the screen", async () => {
    const { context, page } = await contextFor({ signedIn: true, ...PHONE });
    await page.goto(`${web.base}/settings/tokens`);
    await page.check('input[name="scope"][value="read"]');
    await page.click('button:has-text("Create token")');
    await page.waitForSelector("#new-token");
    expect(await overflow(page)).toBeNull();
    await page.goto(`${web.base}/notes/${ids.stream}/settings`);
    await page.click('button:has-text("Create an inbox URL")');
    await page.waitForSelector("#inbox-url");
    expect(await overflow(page)).toBeNull();
    expect(web.violations).toEqual([]);
    await context.close();
  }, 60_000);

  test("on a note's page the editor starts on the first screen, the folders come after it, and toolbar labels keep to one line", async () => {
    const { context, page } = await contextFor({ signedIn: true, ...PHONE });
    for (const [id, editor] of [
      [ids.plain, "textarea"],
      [ids.rich, ".editor"],
      [ids.stream, "pre.stream"],
    ] as const) {
      await page.goto(`${web.base}/notes/${id}`);
      const top = await page.locator(editor).evaluate((el: any) => el.getBoundingClientRect().top);
      expect(top).toBeLessThan(PHONE.height - 120);
      const [asideTop, editorTop] = await page.evaluate((sel: string) => [document.querySelector("aside.side").getBoundingClientRect().top, document.querySelector(sel).getBoundingClientRect().top], editor);
      expect(asideTop).toBeGreaterThan(editorTop);
    }
    await page.goto(`${web.base}/notes/${ids.rich}`);
    const lines = await page.evaluate(() =>
      [...document.querySelectorAll(".toolbar button")].map((b: any) => {
        const r = document.createRange();
        r.selectNodeContents(b);
        const tops = new Set([...r.getClientRects()].map((x: any) => Math.round(x.top)));
        return `${b.textContent}: ${tops.size}`;
      }),
    );
    expect(lines.length).toBeGreaterThan(3);
    expect(lines.filter((l: string) => !l.endsWith(": 1"))).toEqual([]);
    await context.close();
  }, 60_000);

  test("tables marked as cards stack on a phone, each value under its label", async () => {
    const { context, page } = await contextFor({ signedIn: true, ...PHONE });
    // A page of the app with the markup the pages use: a header row, then rows whose cells carry data-label.
    await page.goto(`${web.base}/settings/tokens`);
    await page.evaluate(() => {
      const t = document.createElement("table");
      t.className = "cards";
      t.id = "probe";
      t.innerHTML = '<tr><th>Name</th><th>Scopes</th><th></th></tr><tr><td data-label="Name">laptop</td><td data-label="Scopes">read,write</td><td data-label=""><button>Revoke laptop</button></td></tr>';
      document.querySelector("main").appendChild(t);
    });
    const shape = await page.evaluate(() => {
      const cells = [...document.querySelectorAll("#probe td")];
      const header = document.querySelector("#probe tr");
      return {
        header: header.getBoundingClientRect().height,
        stacked: cells.map((c: any) => Math.round(c.getBoundingClientRect().left)),
        labels: cells.map((c: any) => window.getComputedStyle(c, "::before").content),
      };
    });
    expect(shape.header).toBe(0);
    expect(new Set(shape.stacked).size).toBe(1);
    expect(shape.labels).toEqual(['"Name"', '"Scopes"', "none"]);
    await page.setViewportSize({ width: 1280, height: 820 });
    expect(await page.evaluate(() => new Set([...document.querySelectorAll("#probe td")].map((c: any) => Math.round(c.getBoundingClientRect().left))).size)).toBe(3);
    await context.close();
  }, 30_000);
});

describe.skipIf(!hasChromium)("accessibility", () => {
  for (const colorScheme of ["light", "dark"] as const) {
    test(`axe-core finds nothing serious or critical on any page, ${colorScheme}`, async () => {
      const problems: string[] = [];
      for (const signedIn of [false, true]) {
        const { context, page } = await contextFor({ signedIn, colorScheme });
        for (const v of visits.filter((x) => x.signedIn === signedIn)) {
          await visit(page, v);
          expect(await page.evaluate(() => typeof axe)).toBe("object");
          for (const p of await axeProblems(page)) problems.push(`${v.name}: ${p}`);
        }
        await context.close();
      }
      expect(problems).toEqual([]);
      expect(web.violations).toEqual([]);
    }, 180_000);
  }
});

describe.skipIf(!hasChromium)("light and dark", () => {
  const background = (page: Page) => page.evaluate(() => window.getComputedStyle(document.body).backgroundColor);
  const LIGHT = "rgb(247, 247, 245)";
  const DARK = "rgb(22, 23, 26)";

  test("pages follow the system's scheme until the toggle chooses; the choice is kept in this browser, before the first paint", async () => {
    const { context, page } = await contextFor({ signedIn: true, colorScheme: "dark" });
    await page.goto(`${web.base}/notes`);
    expect(await background(page)).toBe(DARK);
    const toggle = page.locator("[data-theme-toggle]");
    expect(await toggle.getAttribute("aria-pressed")).toBe("true");
    await toggle.click();
    expect(await background(page)).toBe(LIGHT);
    expect(await toggle.getAttribute("aria-pressed")).toBe("false");

    // The stored choice is on <html> before the body is parsed, so the first paint is already light.
    const firstPaint: string[] = [];
    page.on("console", (m) => void firstPaint.push(m.text()));
    await context.addInitScript(() => {
      document.addEventListener("readystatechange", () => {
        if (document.readyState === "interactive") console.log(`theme at parse end: ${document.documentElement.getAttribute("data-theme")}`);
      });
      new window.MutationObserver((_: unknown, o: any) => {
        if (document.body) {
          console.log(`theme when body starts: ${document.documentElement.getAttribute("data-theme")}`);
          o.disconnect();
        }
      }).observe(document, { childList: true, subtree: true });
    });
    await page.goto(`${web.base}/settings`);
    expect(firstPaint).toContain("theme when body starts: light");
    expect(await background(page)).toBe(LIGHT);

    // Another tab of the same browser follows.
    const other = await context.newPage();
    await other.goto(`${web.base}/settings/tokens`);
    expect(await background(other)).toBe(LIGHT);
    await other.locator("[data-theme-toggle]").click();
    await page.waitForFunction(() => document.documentElement.getAttribute("data-theme") === "dark");
    expect(await background(page)).toBe(DARK);

    // A fresh browser (no choice stored) follows its system again.
    const fresh = await contextFor({ signedIn: false, colorScheme: "light" });
    await fresh.page.goto(`${web.base}/signin`);
    expect(await background(fresh.page)).toBe(LIGHT);
    expect(await fresh.page.locator("[data-theme-toggle]").isVisible()).toBe(true);
    await fresh.context.close();
    await context.close();
    expect(web.violations).toEqual([]);
  }, 60_000);

  test("without the script the toggle is not offered", async () => {
    const { context, page } = await contextFor({ signedIn: true, javaScriptEnabled: false });
    await page.goto(`${web.base}/notes`);
    expect(await page.locator("[data-theme-toggle]").isVisible()).toBe(false);
    await context.close();
  });
});

describe.skipIf(!hasChromium)("times", () => {
  test("relative, updated every minute, with the UTC and the local time on hover", async () => {
    const { context, page } = await contextFor({ signedIn: true, timezoneId: "Asia/Tokyo", locale: "en-US" });
    await context.clock.install({ time: new Date() });
    const res = await web.api(user.token, "POST", "/api/v1/notes", { note: { title: "Fresh note" } });
    const created = (await res.json()) as any;
    await page.goto(`${web.base}/notes`);
    const listed = page.locator(`main time[datetime="${created.updated_at}"]`).first();
    expect(await listed.textContent({ timeout: 5000 })).toBe("just now");
    const at = new Date((await listed.getAttribute("datetime")) as string);
    const utc = at.toISOString().slice(0, 16).replace("T", " ") + " UTC";
    const tokyo = at.toLocaleString("en-US", { timeZone: "Asia/Tokyo", dateStyle: "medium", timeStyle: "short" });
    expect(await listed.getAttribute("title")).toBe(`${utc} · ${tokyo} (Asia/Tokyo)`);
    await context.clock.fastForward("03:10");
    expect(await listed.textContent()).toBe("3 min ago");
    await context.clock.fastForward("02:00:00");
    expect(await listed.textContent()).toBe("2 hours ago");
    await context.close();
  }, 30_000);

  test("without the script, times stay in UTC", async () => {
    const { context, page } = await contextFor({ signedIn: true, javaScriptEnabled: false });
    await page.goto(`${web.base}/notes`);
    const text = await page.locator("main time[datetime]").first().textContent({ timeout: 5000 });
    expect(text).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    await context.close();
  });
});

describe.skipIf(!hasChromium)("screenshots for the README", () => {
  test("the notes list, a stream and the editor on a phone and in the dark", async () => {
    const shots: [string, string][] = [
      ["notes", "/notes"],
      ["stream", `/notes/${ids.stream}`],
      ["editor", `/notes/${ids.rich}`],
    ];
    for (const [variant, opts] of [
      ["mobile", { ...PHONE, colorScheme: "light" as const }],
      ["dark", { colorScheme: "dark" as const }],
    ] as const) {
      const { context, page }: { context: BrowserContext; page: Page } = await contextFor({ signedIn: true, ...opts });
      for (const [name, path] of shots) {
        await page.goto(`${web.base}${path}`);
        await page.screenshot({ path: join(SHOTS, `${name}-${variant}.png`), fullPage: false });
      }
      await context.close();
    }
  }, 60_000);
});
