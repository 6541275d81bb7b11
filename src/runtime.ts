import { loadConfig, type Config } from "./config";
import { openDatabase } from "./db/client";
import { migrate } from "./db/migrate";
import { Writer } from "./db/writer";
import type { Deps } from "./deps";
import { RateLimiter } from "./http/rate-limit";
import { systemClock, type Clock } from "./lib/clock";
import { TokenCache } from "./modules/tokens/cache";

/** Opens the database (creating and migrating it as needed) and wires the dependencies. */
export function createDeps(config: Config = loadConfig(), clock: Clock = systemClock): Deps {
  const db = openDatabase(config);
  migrate(db);
  return { config, db, writer: new Writer(db.$client), clock, limiter: new RateLimiter(clock), tokens: new TokenCache(db.$client), heartbeats: new Map() };
}
