import { notifyOnAppend } from "./modules/channels/lines";
import { AsyncLocalStorage } from "node:async_hooks";
import { lookup } from "node:dns/promises";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { loadConfig, type Config } from "./config";
import { OutboxMailer, SmtpMailer, type Mailer } from "./mail/mailer";
import { databasePath, openDatabase, type Db } from "./db/client";
import { WalSync } from "./db/wal-sync";
import { DiskSpace } from "./db/disk-space";
import { logEvent } from "./http/log";
import { migrate, SchemaTooNewError } from "./db/migrate";
import { Writer } from "./db/writer";
import { sqliteOtherWriters } from "./db/other-writers";
import { pgClient, pgDrizzle, PostgresUnavailableError, whyPostgresFailed, type PgDb } from "./db/pg/client";
import { migratePostgres } from "./db/pg/migrate";
import { pgOtherWriters } from "./db/pg/other-writers";
import { pgTransactions, routedDb } from "./db/pg/transactions";
import { assertTablesOf, sharedBuilder } from "./db/tables";
import type { Deps } from "./deps";
import { Metrics } from "./metrics/metrics";
import { RateLimiter } from "./http/rate-limit";
import { PgRateLimiter } from "./http/rate-limit-pg";
import { systemClock, type Clock } from "./lib/clock";
import { deadmanOnAppend } from "./modules/deadman/service";
import { AppendBatch } from "./modules/streams/append/batch";
import type { AppendHook } from "./modules/streams/append/hooks";
import { pgOverlayWrites } from "./modules/streams/append/overlay-pg";
import { sqliteOverlayWrites } from "./modules/streams/append/overlay-sqlite";
import { followersOnAppend } from "./modules/streams/follow";
import { fullSpellOnAppend } from "./modules/streams/retention";
import { searchOnAppend } from "./modules/search/indexer";
import { TokenCache } from "./modules/tokens/cache";
import { webhookOnAppend } from "./modules/webhooks/delivery";
import { rulesOnAppend } from "./modules/rules/on-append";

/**
 * What an append causes, in the order it runs: each hook, in its feature's module, enqueues its
 * side effect inside the append's write (so both commit together or not at all), or acts once the
 * batch has committed, or on an append refused for its stream's size (AppendHook). A new side
 * effect is a hook of its own, added here.
 */
export const AFTER_APPEND: readonly AppendHook[] = [rulesOnAppend, webhookOnAppend, deadmanOnAppend, fullSpellOnAppend, notifyOnAppend, followersOnAppend, searchOnAppend];

function mailerFor(config: Config): Mailer {
  return config.smtpUrl ? new SmtpMailer(config.smtpUrl, config.mailFrom) : new OutboxMailer(join(config.dataDir, "outbox"), config.mailFrom);
}

async function resolveHost(host: string): Promise<{ address: string; family: 4 | 6 }[]> {
  return (await lookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family as 4 | 6 }));
}

/** What every database shares: the clock, limits, mail, metrics. */
function common(config: Config, clock: Clock) {
  return { config, clock, limiter: new RateLimiter(clock), heartbeats: new Map(), jobs: { wake: () => {} }, resolve: resolveHost, mailer: mailerFor(config), metrics: new Metrics() };
}

/**
 * Opens the SQLite database under the data dir (creating and migrating it as needed) and wires the
 * dependencies. Synchronous: the embedded default needs no round trip to start.
 */
export function openSqliteDeps(config: Config = loadConfig(), clock: Clock = systemClock, opts: { memory?: boolean } = {}): Deps {
  if (config.postgres) throw new Error("openSqliteDeps opens SQLite; use openDeps for NOTESTREAM_DATABASE_URL");
  assertTablesOf("sqlite");
  const db = openDatabase({ dataDir: config.dataDir, memory: opts.memory });
  migrate(db);
  const durable = config.synchronous === "FULL" && !opts.memory ? new WalSync(`${databasePath(config.dataDir)}-wal`) : null;
  const appends = new AppendBatch(sqliteOverlayWrites(db.$client));
  const otherWriters = sqliteOtherWriters(db.$client);
  const disk = new DiskSpace({ dataDir: config.dataDir, db: db.$client }, logEvent);
  const deps: Deps = {
    ...common(config, clock),
    db,
    store: { kind: "sqlite", client: db.$client, dataDir: config.dataDir },
    writer: new Writer(db.$client, durable, appends, disk),
    disk,
    tokens: new TokenCache(otherWriters),
    otherWriters,
    close: async () => db.$client.close(),
  };
  appends.attach(deps, AFTER_APPEND);
  return deps;
}

/**
 * Opens PostgreSQL (NOTESTREAM_DATABASE_URL: a pool of NOTESTREAM_DATABASE_POOL connections, one
 * of them the writer's), migrates it once across instances, and wires the same services over it
 * (docs/SCALING.md). Without the URL, SQLite as openSqliteDeps.
 */
export async function openDeps(config: Config = loadConfig(), clock: Clock = systemClock): Promise<Deps> {
  if (!config.postgres) return openSqliteDeps(config, clock);
  const pool = pgClient(config.postgres);
  try {
    await migratePostgres(pool);
    // The data dir holds what is this instance's own (its pid file, mail's outbox without SMTP);
    // made once the database answered, so a refused start leaves nothing behind.
    mkdirSync(config.dataDir, { recursive: true });
    assertTablesOf("postgres");
    const current = new AsyncLocalStorage<PgDb>();
    const conn = await pool.reserve();
    const db = sharedBuilder(routedDb(pgDrizzle(pool), current));
    let writer: Writer | null = null;
    const otherWriters = await pgOtherWriters(pool, (fn) => writer!.afterCommit(fn));
    const appends = new AppendBatch(pgOverlayWrites(conn, otherWriters.id));
    const disk = new DiskSpace(null, logEvent);
    writer = new Writer(pgTransactions(conn, current), null, appends, disk);
    const deps: Deps = {
      ...common(config, clock),
      limiter: new PgRateLimiter(pool, clock),
      db,
      store: { kind: "postgres", pool, connection: () => current.getStore()?.$client ?? pool },
      writer,
      disk,
      tokens: new TokenCache(otherWriters),
      otherWriters,
      close: async () => {
        await otherWriters.stop().catch(() => {});
        void conn.release();
        await pool.close();
      },
    };
    appends.attach(deps, AFTER_APPEND);
    return deps;
  } catch (e) {
    await pool.close();
    if (e instanceof SchemaTooNewError) throw e;
    throw new PostgresUnavailableError(`cannot open PostgreSQL database ${config.postgres.display}: ${whyPostgresFailed(e, config.postgres)}`);
  }
}
