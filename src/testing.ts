/**
 * notestream/testing: the real service inside the caller's Bun process, for a user's own
 * `bun test`: an in-memory database, a clock the test moves, the mail it sent, tokens minted by a
 * call. Nothing is spawned and nothing is written to disk.
 *
 *   import { startTestServer } from "notestream/testing";
 *   const ns = await startTestServer();
 *   await fetch(`${ns.url}/api/v1/notes/by-filename/a.log/append`, { method: "POST",
 *     headers: { authorization: `Bearer ${await ns.token()}` }, body: JSON.stringify({ text: "hi" }) });
 *   await ns.stop();
 */
import { buildHandler } from "./app";
import { loadConfig } from "./config";
import { JobRunner } from "./jobs/runner";
import type { MailMessage } from "./mail/mailer";
import { createAccount } from "./modules/accounts/service";
import { followers } from "./modules/streams/follow";
import { mintToken } from "./modules/tokens/service";
import type { Scope } from "./principal";
import { jobHandlers } from "./queues";
import { openSqliteDeps } from "./runtime";
import { runAllTasks } from "./schedule";
import { listen, servedBy } from "./server";

export interface TestServer {
  /** http://127.0.0.1:<port>, the service's origin. */
  url: string;
  /** A new API token of the test account (scopes read and write by default). */
  token(scopes?: Scope[]): Promise<string>;
  /** The mails the service sent so far, oldest first (alerts, digests, channel mails). */
  mails(): MailMessage[];
  /** Moves the service's clock on, then runs what falls due (dead-man deadlines, digests, jobs). */
  advance(ms: number): Promise<void>;
  /** The service's time now (ms since the epoch). */
  now(): number;
  /** Stops the server and frees the database. */
  stop(): Promise<void>;
}

export interface TestServerOptions {
  /** Where the clock starts (default: now). */
  clock?: number | Date;
  /** The test account's plan (default dev: the API, the dead-man's switch, channels). */
  plan?: "free" | "personal" | "dev" | "team";
  /** Other NOTESTREAM_* settings (e.g. NOTESTREAM_WEBHOOK_ALLOW_CIDRS for a loopback receiver). */
  env?: Record<string, string>;
}

/** Starts the service on a free loopback port with a fresh in-memory database and one account. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  let t = options.clock === undefined ? Date.now() : Number(options.clock);
  const clock = { now: () => t };
  const config = loadConfig({
    NOTESTREAM_DATA_DIR: "/nonexistent/notestream-testing",
    NOTESTREAM_HOST: "127.0.0.1",
    NOTESTREAM_PORT: "0",
    NOTESTREAM_LOG_REQUESTS: "false",
    NOTESTREAM_SYNCHRONOUS: "NORMAL",
    NOTESTREAM_MIN_INTERVAL_SECONDS: "1",
    NOTESTREAM_RETRY_SCALE: "0",
    ...options.env,
  });
  const deps = openSqliteDeps(config, clock, { memory: true });
  const sent: MailMessage[] = [];
  deps.mailer = { send: async (m) => void sent.push(m) };
  const jobs = new JobRunner(deps, jobHandlers);
  const server = listen(deps, servedBy(buildHandler(deps)));
  await jobs.start();
  const account = await deps.writer.write(() => createAccount(deps, { email: "test@example.com", plan: options.plan ?? "dev" }));
  const owner = { accountId: account.account.id, workspaceId: account.workspaceId };
  return {
    url: `http://127.0.0.1:${server.port}`,
    token: async (scopes = ["read", "write"]) => (await deps.writer.write(() => mintToken(deps, { ...owner, scopes }))).token,
    mails: () => [...sent],
    now: () => t,
    advance: async (ms) => {
      t += ms;
      await runAllTasks(deps);
      await jobs.drain();
    },
    stop: async () => {
      followers(deps).closeAll();
      await server.stop(true);
      await jobs.stop();
      await deps.writer.idle();
      await deps.close();
    },
  };
}
