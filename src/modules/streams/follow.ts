import type { Ctx, Deps } from "../../deps";
import { AppError } from "../../http/errors";
import { authenticate } from "../tokens/service";
import type { AppendHook } from "./append/hooks";
import { endOf, lastLines, linesAfter, linesRead, MAX_LINES, positionOf, readableStream, readLines, type Position } from "./lines";
import type { LinesPage, LinesQuery, StreamLine } from "./model";
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

const encoder = new TextEncoder();

/** One open follow, as the registry knows it. */
interface Follow {
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

/**
 * Where a follow starts: after Last-Event-ID (which wins: a reconnecting EventSource keeps its
 * first URL), after ?cursor=, or after the current last line; `?last=N` sends the newest N first.
 */
async function followStart(deps: Deps, noteId: string, query: LinesQuery, lastEventId: string | null): Promise<{ from: Position; replay: StreamLine[] }> {
  const read = linesRead(query);
  if (lastEventId !== null) return { from: positionOf(lastEventId, "Last-Event-ID"), replay: [] };
  if ("after" in read) return { from: read.after, replay: [] };
  if (query.last === undefined) return { from: await endOf(deps, noteId), replay: [] };
  const { lines, next } = await lastLines(deps, noteId, read.last);
  return { from: next ?? (await endOf(deps, noteId)), replay: lines };
}

const wantsEvents = (request: Request): boolean => (request.headers.get("accept") ?? "").includes("text/event-stream");

/**
 * Follows a stream the caller may read, as the request asks (query, Last-Event-ID). `key` is
 * whose slot it takes, in the note's workspace; `stillAllowed` re-checks the caller at every heartbeat.
 */
export async function followStream(
  deps: Deps,
  o: { noteId: string; workspaceId: string; query: LinesQuery; request: Request; key: string; stillAllowed: () => void | Promise<void> },
): Promise<Response> {
  const start = await followStart(deps, o.noteId, o.query, o.request.headers.get("last-event-id"));
  return followResponse(deps, { key: o.key, workspaceId: o.workspaceId, noteId: o.noteId, ...start, stillAllowed: o.stillAllowed, signal: o.request.signal });
}

/** GET /notes/{id}/lines and by filename: a page of lines, or with Accept: text/event-stream, the follow. */
export async function linesOrFollow({
  ctx,
  by,
  query,
  request,
}: {
  ctx: Ctx;
  by: { id: string } | { filename: string };
  query: LinesQuery;
  request: Request;
}): Promise<LinesPage | Response> {
  const note = await readableStream(ctx, by);
  if (!wantsEvents(request)) return readLines(ctx.deps, note, linesRead(query));
  const { deps } = ctx;
  const authorization = request.headers.get("authorization");
  return followStream(deps, {
    noteId: note.id,
    workspaceId: note.workspaceId,
    query,
    request,
    key: `token:${ctx.principal.tokenId}`,
    // A revoked or expired token, or a note deleted or out of reach, ends the follow.
    stillAllowed: async () => {
      await readableStream({ deps, principal: await authenticate(deps, authorization) }, { id: note.id });
    },
  });
}

function eventOf(line: StreamLine): string {
  return `id: ${line.cursor}\ndata: ${JSON.stringify({ text: line.text, at: line.at })}\n\n`;
}

interface FollowOptions {
  /** Whose slot it takes: a token's id, or a browser account's. */
  key: string;
  /** The workspace of the note followed, whose slots it counts against too. */
  workspaceId: string;
  noteId: string;
  /** The follow sends the lines after this one. */
  from: Position;
  /** Lines sent first (the newest N, with ?last=N). */
  replay: StreamLine[];
  /** Asked at every heartbeat: throws (or rejects) once the caller may no longer read the note (revoked, deleted). */
  stillAllowed: () => void | Promise<void>;
  /** The request's signal: the follow ends when the client goes. */
  signal: AbortSignal;
}

/**
 * A Server-Sent Events answer that follows a stream: every new line as an event whose id is its
 * cursor, pushed when the batch that wrote it commits; a comment heartbeat; ends on hang-up,
 * shutdown, or once the caller may no longer read the note.
 */
function followResponse(deps: Deps, o: FollowOptions): Response {
  const registry = followers(deps);
  registry.admit(o.key, o.workspaceId);
  let cursor = o.from;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  let scheduled = false;
  let behind = false;
  /** A pump is reading; a wake meanwhile sets `again`, and the pump reads once more before it stops. */
  let pumping = false;
  let again = false;

  const send = (text: string) => {
    try {
      controller.enqueue(encoder.encode(text));
    } catch {
      // The body is gone (the client left before its cancel reached us).
      close();
    }
  };
  // One pump at a time, reading from the cursor on: a line committed while it reads wakes it
  // again (`again`), so none is missed, and none is sent twice.
  const pump = async (): Promise<void> => {
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    try {
      do {
        again = false;
        while (!closed) {
          if ((controller.desiredSize ?? 1) <= 0) {
            behind = true;
            return;
          }
          const { lines, next } = await linesAfter(deps, o.noteId, cursor, MAX_LINES);
          if (closed) return;
          if (next) cursor = next;
          if (lines.length) send(lines.map(eventOf).join(""));
          if (lines.length < MAX_LINES) break;
        }
      } while (again && !closed);
    } finally {
      pumping = false;
    }
  };
  const pumpNow = () => {
    pump().catch((e: unknown) => {
      console.error(JSON.stringify({ level: "error", msg: "a stream follow could not read its lines", note: o.noteId, error: String((e as Error)?.stack ?? e) }));
      close();
    });
  };
  const wake = () => {
    if (scheduled || closed) return;
    scheduled = true;
    queueMicrotask(() => {
      scheduled = false;
      pumpNow();
    });
  };
  const heartbeat = setInterval(async () => {
    try {
      await o.stillAllowed();
    } catch {
      return close();
    }
    if (!closed) send(": heartbeat\n\n");
  }, registry.heartbeatMs);
  const unwatch = registry.lines.watch(o.noteId, wake);
  const follow: Follow = { key: o.key, workspaceId: o.workspaceId, close: () => close() };

  function close(): void {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    unwatch();
    registry.remove(follow);
    o.signal.removeEventListener("abort", close);
    try {
      controller.close();
    } catch {}
  }

  registry.add(follow);
  o.signal.addEventListener("abort", close);
  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        // The comment makes the answer start at once, so a client sees the follow is open.
        send(`: following\nretry: 2000\n\n${o.replay.map(eventOf).join("")}`);
        pumpNow();
      },
      pull() {
        if (behind) {
          behind = false;
          wake();
        }
      },
      cancel: close,
    },
    { highWaterMark: 16 },
  );
  if (registry.closing) close();
  return new Response(body, {
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-accel-buffering": "no" },
  });
}
