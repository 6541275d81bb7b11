// A follow of a stream as Server-Sent Events: where it starts, every new line as an event once its
// batch commits, heartbeats that re-check the caller; its slot is taken in the registry (follow.ts).
import type { Ctx, Deps } from "../../deps";
import { authenticate } from "../tokens/service";
import { followers } from "./follow";
import { endOf, lastLines, linesAfter, linesRead, MAX_LINES, positionOf, readableStream, readLines, type Position } from "./lines";
import type { LinesPage, LinesQuery, StreamLine } from "./model";

const encoder = new TextEncoder();

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
  const release = registry.hold({ ...o, beat: () => void (closed || send(": heartbeat\n\n")) }, () => close());
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
  const unwatch = registry.lines.watch(o.noteId, wake);

  function close(): void {
    if (closed) return;
    closed = true;
    release();
    unwatch();
    try {
      controller.close();
    } catch {}
  }

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
