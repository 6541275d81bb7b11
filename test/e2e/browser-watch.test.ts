/**
 * The stream settings page's watching cards in Chromium: a cron schedule said in words with its
 * next due time in the stream's zone and the browser's, quiet and pause, maintenance windows
 * (a refused one shown in place), repeats, escalation and acknowledging an alert, and the status
 * badge with its one-time Markdown snippet; the status board's quiet, paused and acknowledged
 * marks; all at a 375 px phone width too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { appendByFilename } from "../../src/modules/streams/append/service";
import { webPrincipal } from "../../src/web/session";
import { AXE, axeProblems, hasChromium, startWebApp, streamOf as streamOfUser, type SignedIn, type WebApp } from "../helpers/browser";

declare const document: any;
declare const window: any;

let web: WebApp;

beforeAll(async () => {
  if (!hasChromium) return;
  web = await startWebApp({ NOTESTREAM_MIN_INTERVAL_SECONDS: "60" });
}, 60_000);

afterAll(async () => {
  if (hasChromium) await web?.close();
});

const streamOf = (user: SignedIn, filename: string) => streamOfUser(web, user, filename);

/** An append with status fail, as `notestream run` sends for a failed job: the stream turns failing at once. */
const failRun = (user: SignedIn, filename: string) =>
  appendByFilename({ ctx: { deps: web.deps, principal: webPrincipal(user.account.id, user.account.workspaceId, Date.now() + 3_600_000) }, filename, text: "the job failed", signal: "fail" });

/** The note as the API reads it. */
const record = async (user: SignedIn, id: string): Promise<Record<string, any>> => (await (await web.api(user.token, "GET", `/api/v1/notes/${id}`)).json()) as Record<string, any>;

const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

/** A signed-in page whose waits give up well inside a test's time, so a missing element fails the test rather than timing it out. */
async function signedIn(opts: Parameters<WebApp["signedInPage"]>[0]): Promise<SignedIn> {
  const user = await web.signedInPage(opts);
  user.page.setDefaultTimeout(5_000);
  return user;
}

/** Posts a form by its button, waiting for the page the redirect lands on. */
async function press(page: Page, button: string) {
  await Promise.all([page.waitForURL(/\/settings$/), page.click(button)]);
}

describe.skipIf(!hasChromium)("the watching cards", () => {
  test("a cron schedule in Europe/Berlin: its words, the next due time in Berlin and in the browser's zone, and a bad one refused in place", async () => {
    const user = await signedIn({ plan: "dev" });
    const { page } = user;
    const id = await streamOf(user, "backup.log");
    await page.goto(`${web.base}/notes/${id}/settings`);
    await page.fill('#schedule input[name="schedule"]', "0 3 * * 1-5");
    await page.fill('#schedule input[name="timezone"]', "Europe/Berlin");
    await page.fill('#schedule input[name="grace_minutes"]', "10");
    await press(page, 'button:has-text("Save schedule")');
    expect(await page.textContent(".flash.ok")).toContain("Schedule saved");
    expect(await page.textContent("[data-schedule-words]")).toBe("At 03:00, Monday through Friday");

    const note = await record(user, id);
    expect(note).toMatchObject({ schedule: "0 3 * * 1-5", timezone: "Europe/Berlin", grace_seconds: 600, expected_interval_seconds: null });
    const due = Date.parse(note.due_at);
    const berlin = new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(due);
    expect(berlin).toBe("03:10");
    const dueText = await page.textContent("[data-due]");
    expect(dueText).toContain("03:10");
    expect(dueText).toMatch(/CES?T/);
    // The browser's own zone (UTC here) by the page's script, not the server's UTC fallback text.
    const local = await page.locator("[data-due] time[data-local]");
    expect(await local.getAttribute("datetime")).toBe(note.due_at);
    expect(await local.textContent()).not.toContain(" UTC");
    expect(await local.textContent()).toMatch(/\b20\d\d\b/);

    await page.fill('#schedule input[name="schedule"]', "* * * * * *");
    await page.click('button:has-text("Save schedule")');
    await page.waitForSelector("#schedule-schedule-error");
    expect(await page.textContent("#schedule-schedule-error")).toContain("more often than every 60 seconds");
    expect(await page.inputValue('#schedule input[name="schedule"]')).toBe("* * * * * *");
    expect((await record(user, id)).schedule).toBe("0 3 * * 1-5");

    await page.fill('#schedule input[name="schedule"]', "0 3 * * 1-5");
    await page.fill('#schedule input[name="timezone"]', "Mars/Olympus");
    await page.click('button:has-text("Save schedule")');
    await page.waitForSelector("#schedule-timezone-error");
    expect(await page.textContent("#schedule-timezone-error")).toContain("IANA time zone");
    expect(web.violations).toEqual([]);
    await user.context.close();
  }, 30_000);

  test("quiet for an hour shows until when and ends; pause shows paused, and the board marks both", async () => {
    const user = await signedIn({ plan: "dev" });
    const { page } = user;
    const id = await streamOf(user, "nightly.log");
    expect((await web.api(user.token, "PATCH", `/api/v1/notes/${id}`, { note: { expected_interval_seconds: 3600 } })).status).toBe(200);
    await page.goto(`${web.base}/notes/${id}/settings`);
    expect(await page.getAttribute("[data-quiet-state]", "data-quiet-state")).toBe("none");

    await press(page, 'button:has-text("Quiet for 1 hour")');
    expect(await page.getAttribute("[data-quiet-state]", "data-quiet-state")).toBe("quiet");
    const until = Date.parse((await record(user, id)).quiet_until);
    expect(Math.abs(until - (Date.now() + 3_600_000))).toBeLessThan(60_000);
    expect(await page.getAttribute("[data-quiet-state] time", "datetime")).toBe(new Date(until).toISOString());

    await page.goto(`${web.base}/notes`);
    const quiet = page.locator(`[data-board-row="${id}"] .badge.quiet`);
    expect(await quiet.getAttribute("title")).toContain(`quiet until ${new Date(until).toISOString().replace("T", " ").slice(0, 16)} UTC`);

    await page.goto(`${web.base}/notes/${id}/settings`);
    await press(page, 'button:has-text("End quiet")');
    expect(await page.getAttribute("[data-quiet-state]", "data-quiet-state")).toBe("none");
    expect((await record(user, id)).quiet_until).toBeNull();

    await press(page, 'button:has-text("Pause until the next write")');
    expect(await page.getAttribute("[data-quiet-state]", "data-quiet-state")).toBe("paused");
    expect((await record(user, id)).deadman_status).toBe("paused");
    await page.goto(`${web.base}/notes`);
    expect(await page.textContent(`[data-board-row="${id}"] [data-health]`)).toBe("paused");
    expect(await page.locator(`[data-board-row="${id}"] .badge.quiet`).count()).toBe(0);
    expect(web.violations).toEqual([]);
    await user.context.close();
  }, 30_000);

  test("a quiet-until time is read in the stream's zone; one in the past is refused beside the field", async () => {
    const user = await signedIn({ plan: "dev" });
    const { page } = user;
    const id = await streamOf(user, "zoned.log");
    expect((await web.api(user.token, "PATCH", `/api/v1/notes/${id}`, { note: { schedule: "0 3 * * *", timezone: "Asia/Tokyo" } })).status).toBe(200);
    await page.goto(`${web.base}/notes/${id}/settings`);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    await page.fill('input[name="quiet_until"]', `${tomorrow}T09:00`);
    await press(page, 'button:has-text("Keep quiet until then")');
    // 09:00 in Tokyo (UTC+9, no daylight saving) is 00:00 UTC.
    expect((await record(user, id)).quiet_until).toBe(`${tomorrow}T00:00:00.000Z`);

    await page.fill('input[name="quiet_until"]', "2001-01-01T09:00");
    await page.click('button:has-text("Keep quiet until then")');
    await page.waitForSelector("#quiet-quiet_until-error");
    expect(await page.textContent("#quiet-quiet_until-error")).toContain("in the future");
    await user.context.close();
  }, 30_000);

  test("add a maintenance window, see it in words, have a bad one refused in place, remove it", async () => {
    const user = await signedIn({ plan: "dev" });
    const { page } = user;
    const id = await streamOf(user, "maint.log");
    await page.goto(`${web.base}/notes/${id}/settings`);
    await page.fill('input[name="window_schedule"]', "0 2 * * 0");
    await page.fill('input[name="window_timezone"]', "Europe/Berlin");
    await page.fill('input[name="window_minutes"]', "120");
    await press(page, 'button:has-text("Add the window")');
    expect(await page.textContent('[data-window="0"] td[data-label="When"]')).toContain("At 02:00, only on Sunday");
    expect(await page.textContent('[data-window="0"] td[data-label="For"]')).toBe("2 hours");
    expect((await record(user, id)).maintenance).toEqual([{ schedule: "0 2 * * 0", timezone: "Europe/Berlin", duration_seconds: 7200 }]);

    await page.fill('input[name="window_schedule"]', "0 25 * * *");
    await page.fill('input[name="window_minutes"]', "30");
    await page.click('button:has-text("Add the window")');
    await page.waitForSelector("#window-window_schedule-error");
    expect(await page.inputValue('input[name="window_schedule"]')).toBe("0 25 * * *");
    expect(await page.getAttribute('input[name="window_schedule"]', "aria-invalid")).toBe("true");
    expect((await record(user, id)).maintenance).toHaveLength(1);

    await page.goto(`${web.base}/notes/${id}/settings`);
    await press(page, '[data-window="0"] button:has-text("Remove")');
    expect(await page.locator("[data-window]").count()).toBe(0);
    expect((await record(user, id)).maintenance).toEqual([]);
    expect(web.violations).toEqual([]);
    await user.context.close();
  }, 30_000);

  test("make a badge: the snippet is shown once and its image answers; rotate kills the old URL; turn it off", async () => {
    const user = await signedIn({ plan: "dev" });
    const { page } = user;
    const id = await streamOf(user, "readme.log");
    await page.goto(`${web.base}/notes/${id}/settings`);
    await press(page, 'button:has-text("Create a badge URL")');
    const markdown = await page.inputValue("#badge-markdown");
    const svgUrl = await page.inputValue("#badge-svg-url");
    expect(markdown).toBe(`![readme.log status](${svgUrl})`);
    expect(svgUrl).toMatch(/\/badge\/bdg_\w+\.svg$/);
    const svg = await fetch(svgUrl);
    expect(svg.status).toBe(200);
    expect(await svg.text()).toContain("readme.log: up");
    expect(await page.locator("[data-badge-preview] svg").getAttribute("aria-label")).toBe("readme.log: up");
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
    await page.click('button[data-copy="badge-markdown"]');
    expect(await page.evaluate(() => window.navigator.clipboard.readText())).toBe(markdown);

    await page.reload();
    expect(await page.locator("#badge-markdown").count()).toBe(0);
    expect(await page.content()).not.toContain(svgUrl);

    await press(page, 'button:has-text("Rotate the badge URL")');
    expect(await page.inputValue("#badge-svg-url")).not.toBe(svgUrl);
    expect((await fetch(svgUrl)).status).toBe(404);
    const rotated = await page.inputValue("#badge-svg-url");
    await press(page, 'button:has-text("Turn the badge off")');
    expect((await fetch(rotated)).status).toBe(404);
    expect(await page.locator("[data-badge-preview]").count()).toBe(0);
    expect(web.violations).toEqual([]);
    await user.context.close();
  }, 30_000);

  test("with a schedule, saving the alert card with no interval keeps the schedule; Turn off ends it", async () => {
    const user = await signedIn({ plan: "dev" });
    const { page } = user;
    const id = await streamOf(user, "cron-alerts.log");
    expect((await web.api(user.token, "PATCH", `/api/v1/notes/${id}`, { note: { schedule: "0 3 * * *" } })).status).toBe(200);
    await page.goto(`${web.base}/notes/${id}/settings`);
    expect(await page.inputValue('input[name="every"]')).toBe("");
    await page.fill('input[name="alert_email"]', "ops@example.com");
    await press(page, 'form[action$="/deadman"] button:has-text("Save")');
    expect(await record(user, id)).toMatchObject({ schedule: "0 3 * * *", alert_email: "ops@example.com", deadman_status: "ok" });

    await press(page, 'form[action$="/deadman"] button:has-text("Turn off")');
    expect(await record(user, id)).toMatchObject({ schedule: null, expected_interval_seconds: null, deadman_status: "off" });
    expect(await page.locator("[data-schedule-words]").count()).toBe(0);
    await user.context.close();
  }, 30_000);

  test("on a plan without the switch the schedule form is shown disabled", async () => {
    const user = await signedIn({ plan: "free" });
    const id = await streamOf(user, "free.log");
    await user.page.goto(`${web.base}/notes/${id}/settings`);
    expect(await user.page.locator('#schedule input[name="schedule"]').isDisabled()).toBe(true);
    expect(await user.page.locator('#quiet button:has-text("Quiet for 1 hour")').isEnabled()).toBe(true);
    await user.context.close();
  }, 30_000);

  test("a failing stream: its alert acknowledged from the page, the board says so; repeats and escalation saved, half an escalation refused in place", async () => {
    const user = await signedIn({ plan: "dev" });
    const { page } = user;
    const id = await streamOf(user, "deploy.log");
    expect((await web.api(user.token, "PATCH", `/api/v1/notes/${id}`, { note: { expected_interval_seconds: 3600 } })).status).toBe(200);
    await failRun(user, "deploy.log");
    await page.goto(`${web.base}/notes/${id}/settings`);
    await page.fill('input[name="repeat_minutes"]', "30");
    await page.fill('input[name="escalate_minutes"]', "60");
    await page.click('#followups button:has-text("Save")');
    await page.waitForSelector("#followups-escalate_to-error");
    expect(await page.inputValue('input[name="repeat_minutes"]')).toBe("30");
    expect((await record(user, id)).repeat_alert_seconds).toBeNull();
    await page.fill('input[name="escalate_to"]', "lead@example.com");
    await press(page, '#followups button:has-text("Save")');
    expect(await record(user, id)).toMatchObject({ repeat_alert_seconds: 1800, escalate_after_seconds: 3600, escalate_to: "lead@example.com", acknowledged_at: null });

    await page.goto(`${web.base}/notes`);
    expect(await page.locator(`[data-board-row="${id}"] .badge.acknowledged`).count()).toBe(0);
    await page.goto(`${web.base}/notes/${id}/settings`);
    await press(page, '[data-ack="open"] button:has-text("Acknowledge")');
    const acked = (await record(user, id)).acknowledged_at;
    expect(acked).not.toBeNull();
    expect(await page.locator('[data-ack="done"]').count()).toBe(1);
    expect(await page.locator('button:has-text("Acknowledge")').count()).toBe(0);
    await page.goto(`${web.base}/notes`);
    expect(await page.getAttribute(`[data-board-row="${id}"] .badge.acknowledged`, "data-acknowledged")).toBe(acked);
    expect(web.violations).toEqual([]);
    await user.context.close();
  }, 30_000);

  test("at 375 px the watching cards of a failing stream stay inside the screen, the windows table stacks as cards, axe finds nothing serious", async () => {
    const user = await signedIn({ plan: "dev", width: 375, height: 812 });
    const { page } = user;
    await user.context.addInitScript({ path: AXE });
    const id = await streamOf(user, "a-stream-with-a-long-filename-for-a-narrow-phone.log");
    const windows = [{ schedule: "0 2 * * 0", timezone: "America/Argentina/Buenos_Aires", duration_seconds: 7200 }];
    const patch = { note: { schedule: "30 4 1,15 * 1-5", timezone: "America/Argentina/Buenos_Aires", maintenance: windows, quiet_until: new Date(Date.now() + 3_600_000).toISOString() } };
    expect((await web.api(user.token, "PATCH", `/api/v1/notes/${id}`, patch)).status).toBe(200);
    await failRun(user, "a-stream-with-a-long-filename-for-a-narrow-phone.log");
    await page.goto(`${web.base}/notes/${id}/settings`);
    await press(page, 'button:has-text("Create a badge URL")');
    expect(await page.locator('[data-ack="open"]').count()).toBe(1);
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    expect(await page.locator("table.windows.cards td[data-label]").count()).toBe(4);
    expect(await axeProblems(page)).toEqual([]);
    expect(web.violations).toEqual([]);
    await user.context.close();
  }, 30_000);
});
