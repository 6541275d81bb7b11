import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildHandler } from "../../src/app";
import { loadConfig } from "../../src/config";
import type { Deps } from "../../src/deps";
import type { Scope } from "../../src/principal";
import type { LimitProfileName, PlanName } from "../../src/limits/plans";
import { createAccount } from "../../src/modules/accounts/service";
import { createTeam, addTeamMember } from "../../src/modules/teams/service";
import { mintToken } from "../../src/modules/tokens/service";
import { jobHandlers } from "../../src/queues";
import { JobRunner } from "../../src/jobs/runner";
import { openDeps } from "../../src/runtime";
import { freshDatabase, type TestDatabase } from "./postgres";

/**
 * The suite runs on SQLite, and again on PostgreSQL with NOTESTREAM_DATABASE_URL set (make test;
 * the tables are PostgreSQL's in that process): then each harness has a database of its own.
 */
export const onPostgres = Boolean(process.env.NOTESTREAM_DATABASE_URL);
/** A restarted harness (same dataDir) finds its database again. */
const databases = new Map<string, TestDatabase>();

/**
 * On the PostgreSQL run, the config variables of this data dir's own database (made on first use,
 * found again on a restart); none on SQLite. Also for in-process apps other than the harness
 * (test/helpers/browser.ts); `dropDatabase(dataDir)` once the app is closed.
 */
export async function databaseEnv(dataDir: string): Promise<Record<string, string>> {
  let pg = databases.get(dataDir);
  if (onPostgres && !pg) databases.set(dataDir, (pg = await freshDatabase({ migrated: true })));
  return pg ? { NOTESTREAM_DATABASE_URL: `${pg.url}?sslmode=disable`, NOTESTREAM_DATABASE_POOL: "4" } : {};
}

/** Drops the data dir's database (PostgreSQL run; nothing on SQLite). */
export async function dropDatabase(dataDir: string): Promise<void> {
  const pg = databases.get(dataDir);
  if (!pg) return;
  databases.delete(dataDir);
  await pg.drop();
}

/** A clock tests can move. `new FakeClock(Date.now())` starts at the real time (for signatures checked against it). */
export class FakeClock {
  constructor(public t = Date.parse("2026-11-22T10:00:00Z")) {}
  now = () => this.t;
  advance(ms: number) {
    this.t += ms;
  }
}

/** Response whose json() is `any`: tests assert on shapes themselves. */
export type TestResponse = Omit<Response, "json"> & { json(): Promise<any> };

export interface Harness {
  deps: Deps;
  clock: FakeClock;
  dataDir: string;
  request: (method: string, path: string, opts?: { token?: string; body?: unknown; headers?: Record<string, string>; ip?: string }) => Promise<TestResponse>;
  account: (plan: PlanName, email?: string) => Promise<{ accountId: string; workspaceId: string; email: string }>;
  token: (a: { accountId: string; workspaceId: string }, scopes?: Scope[], extra?: { noteId?: string; expiresInDays?: number }) => Promise<string>;
  team: (ownerEmail: string, members?: string[]) => Promise<string>;
  close: () => Promise<void>;
  /** Lets fire-and-forget writes (the error log) reach the writer and commit. */
  settle: () => Promise<void>;
  /** Closes the database but keeps the data dir, for a restart with harness({ dataDir, clock }). */
  stop: () => Promise<void>;
  /** The job runner (webhook deliveries, inbox payloads); `await h.jobs.drain()` runs what is due. */
  jobs: JobRunner;
}

let counter = 0;

/**
 * A fresh app on its own temp database. Pass `dataDir` (and `clock`) of a closed harness to
 * restart on the same database, as after a process restart.
 */
export async function harness(
  opts: { profile?: LimitProfileName; env?: Record<string, string>; dataDir?: string; clock?: FakeClock } = {},
): Promise<Harness> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "notestream-test-"));
  const config = loadConfig({
    ...(await databaseEnv(dataDir)),
    NOTESTREAM_DATA_DIR: dataDir,
    NOTESTREAM_LIMIT_PROFILE: opts.profile ?? "standard",
    NOTESTREAM_LOG_REQUESTS: "false",
    NOTESTREAM_SYNCHRONOUS: "NORMAL",
    NOTESTREAM_BASE_URL: "http://notestream.test",
    ...opts.env,
  });
  const clock = opts.clock ?? new FakeClock();
  const deps = await openDeps(config, clock);
  const handle = buildHandler(deps);
  const jobs = new JobRunner(deps, jobHandlers);
  await jobs.start();
  const settle = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    await deps.writer.idle();
  };
  return {
    deps,
    clock,
    dataDir,
    request: (method, path, o = {}) => {
      const headers: Record<string, string> = { ...o.headers };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      let body: string | ReadableStream | Uint8Array | undefined;
      if (o.body !== undefined) {
        const raw = typeof o.body === "string" || o.body instanceof ReadableStream || o.body instanceof Uint8Array;
        body = raw ? (o.body as string | ReadableStream | Uint8Array) : JSON.stringify(o.body);
        headers["content-type"] ??= "application/json";
      }
      return Promise.resolve(handle(new Request(`http://notestream.test${path}`, { method, headers, body }), o.ip ?? "127.0.0.1"));
    },
    account: async (plan, email = `user${++counter}@example.com`) => {
      const r = await deps.writer.write(() => createAccount(deps, { email, plan }));
      return { accountId: r.account.id, workspaceId: r.workspaceId, email };
    },
    token: async (a, scopes = ["read", "write"], extra = {}) =>
      (await deps.writer.write(() => mintToken(deps, { ...a, scopes, ...extra }))).token,
    team: async (ownerEmail, members = []) => {
      const t = await deps.writer.write(() => createTeam(deps, { ownerEmail, name: "Team" }));
      for (const email of members) await deps.writer.write(() => addTeamMember(deps, { teamId: t.id, email }));
      return t.id;
    },
    settle,
    jobs,
    close: async () => {
      await jobs.stop();
      // Fire-and-forget writes land before the database goes away.
      await settle();
      await deps.close();
      rmSync(dataDir, { recursive: true, force: true });
      await dropDatabase(dataDir);
    },
    stop: async () => {
      await jobs.stop();
      await settle();
      await deps.close();
    },
  };
}

/** Reads the error envelope, asserting its shape. */
export async function errorOf(res: TestResponse): Promise<{ code: string; message: string; details?: any }> {
  const body = (await res.json()) as { error: { code: string; message: string; details?: unknown } };
  if (!body.error || typeof body.error.code !== "string" || typeof body.error.message !== "string") {
    throw new Error(`not an error envelope: ${JSON.stringify(body)}`);
  }
  return body.error as { code: string; message: string; details?: any };
}
