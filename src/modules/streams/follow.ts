// The open follows of a process (Server-Sent Events): their slots per token, per workspace and in
// all, and what wakes them. A follow itself, as the answer it streams, is in follow-events.ts.
import type { Deps } from "../../deps";
import { AppError } from "../../http/errors";
import type { AppendHook } from "./append/hooks";
import { LineNotifier } from "./notifier";

/** Open follows per token (or browser account); the server-wide cap is NOTESTREAM_SSE_MAX. */
export const OPEN_PER_TOKEN = 10;

/**
 * Open follows per workspace: a tenth of NOTESTREAM_SSE_MAX, so one tenant's tokens (a Team holds
 * thirty) cannot take the whole pool, and never fewer than one token may hold.
 */
export function openPerWorkspace(sseMax: number): number {
  return Math.max(OPEN_PER_TOKEN, Math.floor(sseMax / 10));
}

/** A slot frees only when a follower hangs up, which no clock predicts: a guess a client can wait. */
const RETRY_AFTER_SECONDS = 30;

/** One open follow, as the registry knows it. */
export interface Follow {
  key: string;
  workspaceId: string;
  close(): void;
}

/**
 * The service's open follows (SSE): how many each token and each workspace holds and in all, the
 * wake-ups of the notes they follow, and one timer that notices lines written by another process
 * (the CLI) from SQLite's data_version, which moves only for other connections' commits
 * (`sqliteDataVersion`). Counted in this process's memory, as the connections they hold are: with
 * several instances, each caps its own.
 */
export class Followers {
  /** A comment line this often keeps proxies from closing an idle stream. */
  heartbeatMs = 25_000;
  /** How often writes of other processes are looked for. */
  recheckMs = 2_000;
  /** Set by closeAll: a follow that opens after it ends at once (its client retries elsewhere or later). */
  closing = false;
  /** The wake-ups of the notes followed, called once a batch that wrote their lines has committed (followersOnAppend). */
  readonly lines = new LineNotifier();
  private open = new Set<Follow>();
  private perKey = new Map<string, number>();
  private perWorkspace = new Map<string, number>();
  private poll: ReturnType<typeof setInterval> | null = null;
  private dataVersion = -1;

  constructor(private readonly deps: Deps) {
    // Where other processes' commits are heard of at once (PostgreSQL), followers read at once.
    deps.otherWriters.onChange?.(() => {
      if (this.open.size > 0) this.lookForOtherWriters();
    });
  }

  get size(): number {
    return this.open.size;
  }

  /** Checks there is a slot for `key` in `workspaceId`, or refuses with 429 when the key, the workspace or the service has none left. */
  admit(key: string, workspaceId: string): void {
    const perWorkspace = openPerWorkspace(this.deps.config.sseMax);
    const message =
      (this.perKey.get(key) ?? 0) >= OPEN_PER_TOKEN
        ? `this token already follows ${OPEN_PER_TOKEN} streams; close one first`
        : (this.perWorkspace.get(workspaceId) ?? 0) >= perWorkspace
          ? `this workspace already follows ${perWorkspace} streams, as many as one workspace may at once; close one first`
          : this.open.size >= this.deps.config.sseMax
            ? "the service follows as many streams as it is configured to; retry later"
            : null;
    if (message) throw new AppError("rate_limited", message, undefined, { "retry-after": String(RETRY_AFTER_SECONDS) });
  }

  add(f: Follow): void {
    this.open.add(f);
    this.perKey.set(f.key, (this.perKey.get(f.key) ?? 0) + 1);
    this.perWorkspace.set(f.workspaceId, (this.perWorkspace.get(f.workspaceId) ?? 0) + 1);
    if (!this.poll) {
      this.dataVersion = this.deps.otherWriters.version();
      this.poll = setInterval(() => this.lookForOtherWriters(), this.recheckMs);
    }
  }

  remove(f: Follow): void {
    if (!this.open.delete(f)) return;
    countDown(this.perKey, f.key);
    countDown(this.perWorkspace, f.workspaceId);
    if (this.open.size === 0 && this.poll) {
      clearInterval(this.poll);
      this.poll = null;
    }
  }

  /**
   * Holds a follow slot for one long answer (an SSE follow, an MCP event stream or listen): 429
   * when none is left, else counted until the returned release. `end` is called at shutdown, when
   * `signal` aborts, and once `stillAllowed` fails at a heartbeat (a revoked token, a note gone);
   * `beat` runs at each heartbeat that passed. `end` must call the release.
   */
  hold(o: { key: string; workspaceId: string; signal: AbortSignal; stillAllowed: () => unknown; beat?: () => void }, end: () => void): () => void {
    this.admit(o.key, o.workspaceId);
    const follow: Follow = { key: o.key, workspaceId: o.workspaceId, close: end };
    const heartbeat = setInterval(async () => {
      try {
        await o.stillAllowed();
      } catch {
        return end();
      }
      o.beat?.();
    }, this.heartbeatMs);
    this.add(follow);
    o.signal.addEventListener("abort", end);
    return () => {
      clearInterval(heartbeat);
      this.remove(follow);
      o.signal.removeEventListener("abort", end);
    };
  }

  /** Ends every open follow (shutdown), so the server's in-flight requests can finish. */
  closeAll(): void {
    this.closing = true;
    for (const f of [...this.open]) f.close();
  }

  private lookForOtherWriters(): void {
    const v = this.deps.otherWriters.version();
    if (v === this.dataVersion) return;
    this.dataVersion = v;
    this.lines.wakeAll();
  }
}

function countDown(counts: Map<string, number>, key: string): void {
  const n = (counts.get(key) ?? 1) - 1;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
}

const registries = new WeakMap<Deps, Followers>();

/** The open follows of this service (one per set of deps). */
export function followers(deps: Deps): Followers {
  let r = registries.get(deps);
  if (!r) registries.set(deps, (r = new Followers(deps)));
  return r;
}

/** Each batch of appends wakes the followers of the streams it wrote, once it has committed. */
export const followersOnAppend: AppendHook = {
  committed(deps, noteIds) {
    const lines = registries.get(deps)?.lines;
    if (lines && lines.size > 0) lines.wake(noteIds);
  },
};
