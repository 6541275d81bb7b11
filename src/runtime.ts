import { join } from "node:path";
import { loadConfig, type Config } from "./config";
import { OutboxMailer, SmtpMailer, type Mailer } from "./mail/mailer";
import { databasePath, openDatabase } from "./db/client";
import { WalSync } from "./db/wal-sync";
import { migrate } from "./db/migrate";
import { Writer } from "./db/writer";
import type { Deps } from "./deps";
import { Metrics } from "./metrics/metrics";
import { RateLimiter } from "./http/rate-limit";
import { systemClock, type Clock } from "./lib/clock";
import { AppendBatch } from "./modules/streams/batch";
import { TokenCache } from "./modules/tokens/cache";
import { lookup } from "node:dns/promises";
import { PostgresNotServedError } from "./db/pg/not-served";

function mailerFor(config: Config): Mailer {
  return config.smtpUrl ? new SmtpMailer(config.smtpUrl, config.mailFrom) : new OutboxMailer(join(config.dataDir, "outbox"), config.mailFrom);
}

async function resolveHost(host: string): Promise<{ address: string; family: 4 | 6 }[]> {
  return (await lookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family as 4 | 6 }));
}

/** Opens the database (creating and migrating it as needed) and wires the dependencies. */
export function createDeps(config: Config = loadConfig(), clock: Clock = systemClock): Deps {
  if (config.postgres) throw new PostgresNotServedError();
  const db = openDatabase(config);
  migrate(db);
  const durable = config.synchronous === "FULL" ? new WalSync(`${databasePath(config.dataDir)}-wal`) : null;
  const appendBatch = new AppendBatch(db.$client);
  return { config, db, writer: new Writer(db.$client, durable, appendBatch), appendBatch, clock, limiter: new RateLimiter(clock), tokens: new TokenCache(db.$client), heartbeats: new Map(), jobs: { wake: () => {} }, resolve: resolveHost, mailer: mailerFor(config), metrics: new Metrics() };
}
