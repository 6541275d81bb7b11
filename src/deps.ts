import type { Config } from "./config";
import type { Db } from "./db/client";
import type { Writer } from "./db/writer";
import type { Clock } from "./lib/clock";

/** Everything with a side effect enters through here, so tests can swap the clock or the data dir. */
export interface Deps {
  config: Config;
  db: Db;
  writer: Writer;
  clock: Clock;
}

export type Scope = "read" | "write" | "append";

/** Who is calling: a token and the one workspace it belongs to. */
export interface Principal {
  tokenId: string;
  accountId: string;
  workspaceId: string;
  scopes: ReadonlySet<Scope>;
  /** Pinned note: the token sees no other note. */
  noteId: string | null;
  kind: "api" | "extension";
}

export interface Ctx {
  deps: Deps;
  principal: Principal;
}
