import type { Config } from "./config";
import type { Db } from "./db/client";
import type { Store } from "./db/store";
import type { DiskSpace } from "./db/disk-space";
import type { Writer } from "./db/writer";
import type { Limiter } from "./http/rate-limit";
import type { Clock } from "./lib/clock";
import type { Mailer } from "./mail/mailer";
import type { Metrics } from "./metrics/metrics";
import type { TokenCache } from "./modules/tokens/cache";
import type { OtherWriters } from "./db/other-writers";
import type { Principal } from "./principal";

/** Everything with a side effect enters through here, so tests can swap the clock or the data dir. */
export interface Deps {
  config: Config;
  db: Db;
  /** Which database this is, with its own client: what the parts that differ between the two take. */
  store: Store;
  writer: Writer;
  /** A full disk: the reserve, the 507 spell, the room left (db/disk-space.ts); the writer asks it. */
  disk: DiskSpace;
  clock: Clock;
  limiter: Limiter;
  tokens: TokenCache;
  /** Commits of other processes (the CLI beside SQLite, other instances on PostgreSQL). */
  otherWriters: OtherWriters;
  /** Closes the database (after the writer is idle). */
  close: () => Promise<void>;
  /** Last time each background loop showed a sign of life (ms), for /up/deep. */
  heartbeats: Map<string, number>;
  /** The job runner, woken when a write enqueues a job; a no-op until one starts. */
  jobs: { wake: () => void };
  /** DNS, for outbound webhooks: every address a name resolves to. */
  resolve: (host: string) => Promise<{ address: string; family: 4 | 6 }[]>;
  /** Used only by the mail job; everything else enqueues mail. */
  mailer: Mailer;
  /** What GET /metrics exposes; features count their background events here (src/metrics/). */
  metrics: Metrics;
}

/** What a write sees of its request's Idempotency-Key: storing its answer in its own transaction (http/idempotency.ts). */
export interface IdempotentWrite {
  store(status: number, body: string): Promise<void>;
}

export interface Ctx {
  deps: Deps;
  principal: Principal;
  /** Present when the request carries an Idempotency-Key: its answer is stored with the write. */
  idempotency?: IdempotentWrite;
}
