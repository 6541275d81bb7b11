/**
 * The Channels page, a stream's Notify card and the board's notice of disabled channels in
 * Chromium, against loopback receivers: add a channel (a refused URL's message in place), send it
 * a test and see the result after a reload, edit and delete it; route a stream's lines to it and
 * see an append arrive; a disabled channel named on the board and re-enabled from its page; all at
 * a 375 px phone width too, with axe.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import type { Page } from "playwright-core";
import { channels } from "../../src/db/tables";
import { appendByFilename } from "../../src/modules/streams/append/service";
import { webPrincipal } from "../../src/web/session";
import { AXE, axeProblems, hasChromium, startWebApp, streamOf as streamOfUser, type SignedIn, type WebApp } from "../helpers/browser";
import { receiver } from "../helpers/receiver";

declare const document: any;
declare const window: any;

let web: WebApp;
let ok: ReturnType<typeof receiver>;
let failing: ReturnType<typeof receiver>;

beforeAll(async () => {
  if (!hasChromium) return;
  ok = receiver();
  failing = receiver(() => new Response("down for maintenance", { status: 503 }));
  web = await startWebApp({ NOTESTREAM_WEBHOOK_ALLOW_CIDRS: "127.0.0.0/8" });
}, 60_000);

afterAll(async () => {
  if (!hasChromium) return;
  await web?.close();
  ok?.stop();
  failing?.stop();
});

const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

async function signedIn(opts: Parameters<WebApp["signedInPage"]>[0] = { plan: "dev" }): Promise<SignedIn> {
  const user = await web.signedInPage(opts);
  user.page.setDefaultTimeout(5_000);
  return user;
}

/** Posts a form by its button, waiting for the page the redirect lands on. */
async function press(page: Page, button: string, back: RegExp = /\/channels$/) {
  await Promise.all([page.waitForURL(back), page.click(button)]);
}

/** The workspace's channels as the API lists them. */
const apiChannels = async (user: SignedIn): Promise<Record<string, any>[]> => (await (await web.api(user.token, "GET", "/api/v1/channels")).json()) as Record<string, any>[];

/** The API's record of the channel of that name (two made in the same millisecond may list in either order). */
const named = async (user: SignedIn, name: string): Promise<Record<string, any>> => (await apiChannels(user)).find((c) => c.name === name)!;

/** The note as the API reads it. */
const noteRecord = async (user: SignedIn, id: string): Promise<Record<string, any>> => (await (await web.api(user.token, "GET", `/api/v1/notes/${id}`)).json()) as Record<string, any>;

/** Adds a channel through the page's form. */
async function addChannel(page: Page, name: string, url: string) {
  await page.goto(`${web.base}/channels`);
  await page.fill('#add-channel input[name="name"]', name);
  await page.fill('#add-channel input[name="url"]', url);
  await press(page, '#add-channel button:has-text("Add channel")');
}

/** Reloads the page until the row's last attempt shows, as a person would after pressing the test button. */
async function lastResult(page: Page, id: string): Promise<string> {
  // The form's post and its redirect finish first: a reload in the middle of them is refused.
  await page.waitForLoadState("load");
  for (let i = 0; i < 50; i++) {
    await page.reload();
    const shown = page.locator(`[data-channel="${id}"] [data-last-result]`);
    if ((await shown.count()) > 0) return (await shown.textContent())!;
    await Bun.sleep(100);
  }
  throw new Error("the test's result never showed");
}

const disable = (id: string) => web.deps.db.update(channels).set({ status: "disabled", failures: 10, lastError: "HTTP 503; disabled after 10 failures in a row" }).where(eq(channels.id, id));

describe.skipIf(!hasChromium)("the Channels page", () => {
  test("a refused URL's message in place, then a channel at a loopback receiver: a test arrives and its result shows after a reload", async () => {
    const user = await signedIn();
    const { page } = user;
    await page.goto(`${web.base}/notes`);
    await press(page, 'nav[aria-label="Main"] a:has-text("Channels")');
    expect(await page.textContent("main")).toContain("tgram://123456789:BOT_TOKEN/CHAT_ID");

    await page.fill('#add-channel input[name="name"]', "phone");
    await page.fill('#add-channel input[name="url"]', "ntfys://ntfy.sh/");
    // The format applies to http(s) URLs only: the script hides it for the others.
    expect(await page.locator("#add-channel [data-channel-format]").isVisible()).toBe(false);
    await page.click('#add-channel button:has-text("Add channel")');
    await page.waitForSelector("#add-url-error");
    expect(await page.textContent("#add-url-error")).toBe("The URL needs a topic: ntfys://ntfy.sh/TOPIC, the topic 1 to 64 letters, digits, - or _.");
    expect(await page.inputValue('#add-channel input[name="url"]')).toBe("ntfys://ntfy.sh/");
    expect(await page.getAttribute('#add-channel input[name="url"]', "aria-invalid")).toBe("true");
    expect(await apiChannels(user)).toEqual([]);

    await page.fill('#add-channel input[name="url"]', `${ok.url}/hooks/phone`);
    expect(await page.locator("#add-channel [data-channel-format]").isVisible()).toBe(true);
    await page.selectOption('#add-channel select[name="format"]', "slack");
    await press(page, '#add-channel button:has-text("Add channel")');
    expect(await page.textContent(".flash.ok")).toContain("Channel “phone” added");
    const [made] = await apiChannels(user);
    expect(made).toMatchObject({ name: "phone", kind: "webhook", format: "slack", status: "enabled", last_attempt_at: null });
    const row = page.locator(`[data-channel="${made!.id}"]`);
    expect(await row.locator('td[data-label="URL"]').textContent()).toBe(`${ok.url}/****`);
    expect(await row.locator("[data-status]").textContent()).toBe("enabled");

    const before = ok.received.length;
    await press(page, `[data-channel="${made!.id}"] button:has-text("Send test")`);
    expect(await page.textContent(".flash.ok")).toContain("Test sent");
    await ok.waitFor(before + 1);
    expect(ok.received.at(-1)!.path).toBe("/hooks/phone");
    expect(JSON.parse(ok.received.at(-1)!.body).text).toContain("Test from notestream: phone");
    expect(await lastResult(page, made!.id)).toBe("delivered");
    expect(web.violations).toEqual([]);
    await user.context.close();
  }, 30_000);

  test("a test to a failing receiver shows why under Last attempt", async () => {
    const user = await signedIn();
    const { page } = user;
    await addChannel(page, "broken", `${failing.url}/hook`);
    const [made] = await apiChannels(user);
    await press(page, `[data-channel="${made!.id}"] button:has-text("Send test")`);
    expect(await page.textContent(".flash.ok")).toContain("Test sent");
    expect(await lastResult(page, made!.id)).toContain("503");
    expect((await apiChannels(user))[0]).toMatchObject({ status: "enabled", last_error: expect.stringContaining("HTTP 503") });
    await user.context.close();
  }, 30_000);

  test("rename and point at a new URL; a taken name is refused in place; delete asks first", async () => {
    const user = await signedIn();
    const { page } = user;
    await addChannel(page, "ops", "ntfys://ntfy.sh/acme-ops");
    await addChannel(page, "chat", `${ok.url}/chat`);
    const [ops, chat] = [await named(user, "ops"), await named(user, "chat")];

    await page.click(`[data-channel="${chat!.id}"] summary`);
    await page.fill(`[data-channel="${chat!.id}"] input[name="name"]`, "ops");
    await page.click(`[data-channel="${chat!.id}"] button:has-text("Save")`);
    await page.waitForSelector(`#edit\\:${chat!.id}-name-error`);
    expect(await page.textContent(`#edit\\:${chat!.id}-name-error`)).toBe('A channel named "ops" already exists.');
    expect(await page.getAttribute(`[data-channel="${chat!.id}"] details`, "open")).not.toBeNull();

    await page.fill(`[data-channel="${chat!.id}"] input[name="name"]`, "team chat");
    await page.fill(`[data-channel="${chat!.id}"] input[name="url"]`, "gotify://127.0.0.1:9/AbCdEf123456");
    await press(page, `[data-channel="${chat!.id}"] button:has-text("Save")`);
    expect((await apiChannels(user)).find((c) => c.id === chat!.id)).toMatchObject({ name: "team chat", kind: "gotify", url: "gotify://127.0.0.1:9/AbCd****" });

    page.once("dialog", (d) => d.dismiss());
    await page.click(`[data-channel="${ops!.id}"] button:has-text("Delete")`);
    await Bun.sleep(200);
    expect(await apiChannels(user)).toHaveLength(2);
    page.once("dialog", (d) => d.accept());
    await press(page, `[data-channel="${ops!.id}"] button:has-text("Delete")`);
    expect((await apiChannels(user)).map((c) => c.name)).toEqual(["team chat"]);
    expect(await page.locator(`[data-channel="${ops!.id}"]`).count()).toBe(0);
    await user.context.close();
  }, 30_000);
});

describe.skipIf(!hasChromium)("the Digests section", () => {
  test("a refused schedule in place; a digest to a channel, sent now, arrives with the stream's lines; deleted after asking", async () => {
    const user = await signedIn();
    const { page } = user;
    await streamOfUser(web, user, "nightly.log");
    await addChannel(page, "morning", `${ok.url}/digest`);
    const channel = await named(user, "morning");
    await page.fill('#add-digest input[name="schedule"]', "0 25 * * *");
    await page.fill('#add-digest input[name="timezone"]', "Europe/Berlin");
    await page.check('#add-digest input[name="scope"][value="list"]');
    await page.fill('#add-digest input[name="streams"]', "nightly.log");
    await page.click('#add-digest button:has-text("Add digest")');
    await page.waitForSelector("#digest-add-schedule-error");
    expect(await page.textContent("#digest-add-schedule-error")).toStartWith("This schedule");
    expect(await page.inputValue('#add-digest input[name="streams"]')).toBe("nightly.log");
    expect(await page.isChecked('#add-digest input[name="scope"][value="list"]')).toBe(true);

    await page.fill('#add-digest input[name="schedule"]', "0 8 * * 1-5");
    await page.fill('#add-digest input[name="last_lines"]', "3");
    await press(page, '#add-digest button:has-text("Add digest")');
    const [digest] = (await (await web.api(user.token, "GET", "/api/v1/digests")).json()) as Record<string, any>[];
    expect(digest).toMatchObject({ schedule: "0 8 * * 1-5", timezone: "Europe/Berlin", channel_id: channel.id, email: null, streams: ["nightly.log"], last_lines: 3, last_sent_at: null });
    const row = page.locator(`[data-digest="${digest!.id}"]`);
    expect(await row.locator("[data-digest-words]").textContent()).toBe("At 08:00, Monday through Friday");
    expect(await row.locator('td[data-label="To"]').textContent()).toContain("morning");

    const ctx = { deps: web.deps, principal: webPrincipal(user.account.id, user.account.workspaceId, Date.now() + 3_600_000) };
    await appendByFilename({ ctx, filename: "nightly.log", text: "backup finished in 42 s" });
    const before = ok.received.length;
    await press(page, `[data-digest="${digest!.id}"] button:has-text("Send now")`);
    expect(await page.textContent(".flash.ok")).toContain("Digest sent");
    await ok.waitFor(before + 1);
    const sent = ok.received.filter((r) => r.path === "/digest");
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toContain("nightly.log");
    expect(sent[0]!.body).toContain("backup finished in 42 s");
    expect(await row.locator('td[data-label="Next"] time').count()).toBe(2);

    page.once("dialog", (d) => d.accept());
    await press(page, `[data-digest="${digest!.id}"] button:has-text("Delete")`);
    expect(await (await web.api(user.token, "GET", "/api/v1/digests")).json()).toEqual([]);
    expect(web.violations).toEqual([]);
    await user.context.close();
  }, 30_000);

  test("a digest by mail needs an address: left empty it is refused beside the field; sent now, it reaches the mailbox", async () => {
    const user = await signedIn();
    const { page } = user;
    await page.goto(`${web.base}/channels`);
    expect(await page.inputValue('#add-digest select[name="to"]')).toBe("email");
    await page.fill('#add-digest input[name="schedule"]', "0 8 * * *");
    await page.click('#add-digest button:has-text("Add digest")');
    await page.waitForSelector("#digest-add-email-error");
    expect(await page.textContent("#digest-add-email-error")).toBe("Enter the address to mail it to, or choose a channel.");
    await page.fill('#add-digest input[name="email"]', "team@example.com");
    await press(page, '#add-digest button:has-text("Add digest")');
    expect(await page.textContent('[data-digest] td[data-label="To"]')).toContain("team@example.com");
    const before = web.smtp.mails.length;
    await press(page, '[data-digest] button:has-text("Send now")');
    await web.smtp.waitFor(before + 1);
    expect(web.smtp.mails.filter((m) => m.to.includes("team@example.com")).map((m) => m.subject)).toEqual([expect.stringContaining("[notestream]")]);
    await user.context.close();
  }, 30_000);
});

describe.skipIf(!hasChromium)("a stream's Notify card and the board", () => {
  test("with no channels the card leads to the Channels page; a channel added for lines gets the next append", async () => {
    const user = await signedIn();
    const { page } = user;
    const id = await streamOfUser(web, user, "deploy.log");
    await page.goto(`${web.base}/notes/${id}/settings`);
    await press(page, '#notify a:has-text("Add one on the Channels page")');

    await addChannel(page, "lines", `${ok.url}/lines`);
    const [made] = await apiChannels(user);
    await page.goto(`${web.base}/notes/${id}/settings`);
    await page.selectOption('#notify select[name="channel_id"]', made!.id);
    await page.uncheck('#notify form[action$="/notify"] input[value="alerts"]');
    await page.click('#notify form[action$="/notify"] button:has-text("Add")');
    await page.waitForSelector("#notify-add-events-error");
    expect(await page.textContent("#notify-add-events-error")).toBe("Choose alerts, lines or both.");

    await page.check('#notify form[action$="/notify"] input[value="lines"]');
    await press(page, '#notify form[action$="/notify"] button:has-text("Add")', /\/settings$/);
    expect((await noteRecord(user, id)).notify).toEqual([{ channel_id: made!.id, events: ["lines"], batch_seconds: null }]);
    expect(await page.textContent(`[data-notify="${made!.id}"] h3`)).toBe("lines");

    const before = ok.received.length;
    const ctx = { deps: web.deps, principal: webPrincipal(user.account.id, user.account.workspaceId, Date.now() + 3_600_000) };
    await appendByFilename({ ctx, filename: "deploy.log", text: "release 42 rolled out" });
    await ok.waitFor(before + 1);
    const got = ok.received.filter((r) => r.path === "/lines");
    expect(got).toHaveLength(1);
    expect(got[0]!.body).toContain("release 42 rolled out");
    expect(got[0]!.body).not.toContain("first line");

    // A window the browser's own check would stop is the service's to refuse: shown beside the field.
    await page.locator(`[data-notify="${made!.id}"] input[name="batch_seconds"]`).evaluate((el: any) => (el.removeAttribute("max"), (el.value = "7200")));
    await page.click(`[data-notify="${made!.id}"] button:has-text("Save")`);
    await page.waitForSelector(`[id="notify:${made!.id}-batch_seconds-error"]`);
    expect(await page.textContent(`[id="notify:${made!.id}-batch_seconds-error"]`)).toContain("from 1 to 3600");
    await page.fill(`[data-notify="${made!.id}"] input[name="batch_seconds"]`, "60");
    await press(page, `[data-notify="${made!.id}"] button:has-text("Save")`, /\/settings$/);
    expect((await noteRecord(user, id)).notify[0].batch_seconds).toBe(60);

    await press(page, `[data-notify="${made!.id}"] button:has-text("Remove")`, /\/settings$/);
    expect((await noteRecord(user, id)).notify).toEqual([]);
    expect(web.violations).toEqual([]);
    await user.context.close();
  }, 30_000);

  test("a disabled channel is named on the board with a link; its page marks it and Re-enable turns it back on", async () => {
    const user = await signedIn();
    const { page } = user;
    await addChannel(page, "pager", `${ok.url}/pager`);
    const [made] = await apiChannels(user);
    await page.goto(`${web.base}/notes`);
    expect(await page.locator("[data-disabled-channels]").count()).toBe(0);

    await disable(made!.id);
    await page.goto(`${web.base}/notes`);
    expect(await page.textContent("[data-disabled-channels]")).toContain("The channel pager is turned off");
    await press(page, '[data-disabled-channels] a:has-text("Channels page")');
    const row = page.locator(`[data-channel="${made!.id}"]`);
    expect(await row.locator("[data-status]").textContent()).toBe("disabled");
    expect(await row.getAttribute("class")).toContain("attention");
    expect(await row.locator("[data-last-result]").count()).toBe(0);

    await press(page, `[data-channel="${made!.id}"] button:has-text("Re-enable")`);
    expect(await page.textContent(".flash.ok")).toContain("re-enabled");
    expect((await apiChannels(user))[0]).toMatchObject({ status: "enabled", failures: 0 });
    await page.goto(`${web.base}/notes`);
    expect(await page.locator("[data-disabled-channels]").count()).toBe(0);
    await user.context.close();
  }, 30_000);

  test("the board's notice follows a channel turning off and back on while the page stays open", async () => {
    const user = await signedIn();
    const { page } = user;
    await addChannel(page, "siren", `${ok.url}/siren`);
    const [made] = await apiChannels(user);
    // The page's timers on a clock the test moves: each poll comes when the test says, not ten seconds later.
    await page.clock.install();
    await page.goto(`${web.base}/notes`);
    await page.evaluate(() => {
      (window as unknown as { boardMarker: string }).boardMarker = "same page";
    });
    expect(await page.locator("[data-disabled-channels]").count()).toBe(0);

    await disable(made!.id);
    await page.clock.fastForward(10_000);
    await page.waitForSelector("[data-disabled-channels]", { timeout: 10_000 });
    expect(await page.textContent("[data-disabled-channels]")).toContain("The channel siren is turned off");

    // Any change to a channel re-enables it (API.md); the next poll takes the notice away.
    expect((await web.api(user.token, "PATCH", `/api/v1/channels/${made!.id}`, { channel: { name: "siren" } })).status).toBe(200);
    await page.clock.fastForward(10_000);
    await page.waitForSelector("[data-disabled-channels]", { state: "detached", timeout: 10_000 });
    expect(await page.evaluate(() => (window as unknown as { boardMarker: string }).boardMarker)).toBe("same page");
    expect(web.violations).toEqual([]);
    await user.context.close();
  }, 30_000);

  test("at 375 px the Channels page with its digests, the Notify card and the board's notice stay inside the screen; axe finds nothing serious", async () => {
    const user = await signedIn({ plan: "dev", width: 375, height: 812 });
    const { page } = user;
    await user.context.addInitScript({ path: AXE });
    const id = await streamOfUser(web, user, "a-stream-with-a-long-filename-for-a-narrow-phone.log");
    await addChannel(page, "a channel with a rather long name for a phone", "matrixs://syt_averylongaccesstoken@matrix.example.org/!aroomidthatislong:example.org");
    await addChannel(page, "hook", `${ok.url}/a/very/long/path/that/would/not/fit/on/a/phone/screen`);
    const [matrix, hook] = [await named(user, "a channel with a rather long name for a phone"), await named(user, "hook")];
    await disable(matrix!.id);
    expect((await web.api(user.token, "PATCH", `/api/v1/notes/${id}`, { note: { notify: [{ channel_id: matrix!.id, events: ["alerts", "lines"], batch_seconds: 30 }] } })).status).toBe(200);

    const digest = { schedule: "30 6 * * 1-5", timezone: "America/Argentina/Buenos_Aires", channel_id: hook!.id, streams: ["a-stream-with-a-long-filename-for-a-narrow-phone.log"] };
    expect((await web.api(user.token, "POST", "/api/v1/digests", { digest })).status).toBe(201);
    await page.goto(`${web.base}/channels`);
    await page.click(`[data-channel="${hook!.id}"] summary`);
    expect(await page.locator("table.digests.cards td[data-label]").count()).toBe(5);
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    expect(await axeProblems(page)).toEqual([]);

    await page.goto(`${web.base}/notes/${id}/settings`);
    expect(await page.textContent("#notify .flash.error")).toContain("a channel with a rather long name for a phone");
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    expect(await axeProblems(page)).toEqual([]);

    await page.goto(`${web.base}/notes`);
    expect(await page.locator("[data-disabled-channels]").count()).toBe(1);
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    expect(await axeProblems(page)).toEqual([]);
    expect(web.violations).toEqual([]);
    await user.context.close();
  }, 30_000);
});
