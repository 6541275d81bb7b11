/**
 * What every browser test file needs: the app on a loopback port with its job runner, mail to a
 * loopback SMTP server, Debian's Chromium driven by playwright-core, and signed-in pages without
 * going through the sign-up mail each time. Pages collect Content-Security-Policy violations (any
 * is a bug: the pages allow no inline script or style).
 *
 *   const web = await startWebApp();            // in beforeAll (skip the suite when !hasChromium)
 *   const { page, account } = await web.signedInPage({ plan: "dev" });
 *   await page.goto(`${web.base}/notes`);
 *   expect(web.violations).toEqual([]);
 *   await web.close();                          // in afterAll
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { buildHandler } from "../../src/app";
import { loadConfig } from "../../src/config";
import type { Deps } from "../../src/deps";
import { JobRunner } from "../../src/jobs/runner";
import { createAccount } from "../../src/modules/accounts/service";
import { hashPassword } from "../../src/modules/accounts/password";
import { mintToken } from "../../src/modules/tokens/service";
import { jobHandlers } from "../../src/queues";
import { openDeps } from "../../src/runtime";
import type { PlanName } from "../../src/limits/plans";
import { createSession, SESSION_COOKIE } from "../../src/web/session";
import { notes } from "../../src/db/tables";
import { appendByFilename } from "../../src/modules/streams/append/service";
import { webPrincipal } from "../../src/web/session";
import { databaseEnv, dropDatabase } from "./harness";
import { smtpServer } from "./mail";

/** The page's globals, inside functions that run in the browser (the project's types have no DOM). */
declare const document: any;
declare const axe: any;

/** axe-core, for `context.addInitScript({ path: AXE })`: an init script runs outside the pages' policy. */
export const AXE = require.resolve("axe-core/axe.min.js");

/** axe-core's serious and critical findings on the page as it is, one line each. */
export const axeProblems = (page: Page): Promise<string[]> =>
  page.evaluate(async () => {
    const r = await axe.run(document, { resultTypes: ["violations"] });
    return r.violations
      .filter((v: any) => v.impact === "serious" || v.impact === "critical")
      .map((v: any) => `${v.id}: ${v.nodes.map((n: any) => n.target.join(" ")).join(", ")}`);
  });

/** A stream of the signed-in account with one line, made without the API (free plans have none); its id. */
export async function streamOf(web: WebApp, user: SignedIn, filename: string): Promise<string> {
  const ctx = { deps: web.deps, principal: webPrincipal(user.account.id, user.account.workspaceId, Date.now() + 3_600_000) };
  await appendByFilename({ ctx, filename, text: "first line" });
  const [note] = await web.deps.db
    .select({ id: notes.id })
    .from(notes)
    .where(and(eq(notes.workspaceId, user.account.workspaceId), eq(notes.filename, filename)));
  return note!.id;
}

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (make test installs Debian's chromium as root)`);

/** The password every account made by signedInPage() has. */
export const PASSWORD = "Brows3r!test";

export interface SignedIn {
  page: Page;
  context: BrowserContext;
  account: { id: string; email: string; workspaceId: string };
  /** An API token of the account (read, write, append) for setting things up through the API; "" on plans without API access. */
  token: string;
}

export interface WebApp {
  base: string;
  deps: Deps;
  smtp: Awaited<ReturnType<typeof smtpServer>>;
  browser: Browser;
  violations: string[];
  /** A fresh browser context (own cookies) with one page; 1280×820 unless told. */
  newPage(opts?: { width?: number; height?: number; colorScheme?: "light" | "dark" }): Promise<{ page: Page; context: BrowserContext }>;
  /** A new confirmed account (free plan unless told) signed in on a new page of its own. */
  signedInPage(opts?: { plan?: PlanName; email?: string; width?: number; height?: number; colorScheme?: "light" | "dark" }): Promise<SignedIn>;
  /** fetch() against the API with a token. */
  api(token: string, method: string, path: string, body?: unknown): Promise<Response>;
  close(): Promise<void>;
}

let counter = 0;

export async function startWebApp(env: Record<string, string> = {}): Promise<WebApp> {
  const smtp = await smtpServer();
  const dataDir = mkdtempSync(join(tmpdir(), "notestream-browser-"));
  // On the PostgreSQL run (NOTESTREAM_DATABASE_URL set), a database of its own, as the harness's apps.
  const deps = await openDeps(
    loadConfig({
      ...(await databaseEnv(dataDir)),
      NOTESTREAM_DATA_DIR: dataDir,
      NOTESTREAM_SMTP_URL: smtp.url,
      NOTESTREAM_LOG_REQUESTS: "false",
      NOTESTREAM_SYNCHRONOUS: "NORMAL",
      NOTESTREAM_RETRY_SCALE: "0.001",
      ...env,
    }),
  );
  const handle = buildHandler(deps);
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r, srv) => handle(r, srv.requestIP(r)?.address) });
  const base = `http://127.0.0.1:${server.port}`;
  deps.config.baseUrl = base;
  const runner = new JobRunner(deps, jobHandlers);
  await runner.start();
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const violations: string[] = [];
  const passwordHash = await hashPassword(PASSWORD);

  const newPage: WebApp["newPage"] = async (opts = {}) => {
    const context = await browser.newContext({ viewport: { width: opts.width ?? 1280, height: opts.height ?? 820 }, colorScheme: opts.colorScheme ?? "light" });
    const page = await context.newPage();
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    return { page, context };
  };

  return {
    base,
    deps,
    smtp,
    browser,
    violations,
    newPage,
    signedInPage: async (opts = {}) => {
      const email = opts.email ?? `browser${++counter}-${Date.now()}@example.com`;
      const made = await deps.writer.write(() => createAccount(deps, { email, plan: opts.plan ?? "free", passwordHash, ageConfirmed: true }));
      const { secret } = await createSession(deps, made.account);
      // Free accounts have no API access: their token is "" (set up through the pages or deps instead).
      const token = await deps.writer
        .write(async () => (await mintToken(deps, { accountId: made.account.id, workspaceId: made.workspaceId, scopes: ["read", "write", "append"] })).token)
        .catch(() => "");
      const { page, context } = await newPage(opts);
      await context.addCookies([{ name: SESSION_COOKIE, value: secret, url: base, httpOnly: true, sameSite: "Lax" }]);
      return { page, context, account: { id: made.account.id, email: made.account.email, workspaceId: made.workspaceId }, token };
    },
    api: (token, method, path, body) =>
      fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    close: async () => {
      await browser.close();
      await runner.stop();
      server.stop(true);
      await smtp.stop();
      await deps.writer.idle();
      await deps.close();
      rmSync(dataDir, { recursive: true, force: true });
      await dropDatabase(dataDir);
    },
  };
}
