// The hosted endpoint's sessions: what a request cannot carry on its own, an event stream (GET
// /mcp) and the streams subscribed to, held by the instance that started the session. Every
// request is still answered by a fresh server, so a session's other requests may land anywhere.
import type { Deps } from "../deps";
import { followers } from "../modules/streams/follow";
import type { Principal } from "../principal";
import { StreamSubscriptions } from "./subscriptions";

/** A session with no event stream open and no request for this long is forgotten. */
export const SESSION_IDLE_MS = 30 * 60_000;
/** Sessions one token holds on one instance; starting one more forgets its oldest. */
export const SESSIONS_PER_TOKEN = 10;

const encoder = new TextEncoder();

export interface HostedSession {
  id: string;
  tokenId: string;
  subscriptions: StreamSubscriptions;
  usedAt: number;
  /** The open event stream's end, null while none is open. */
  closeStream: (() => void) | null;
  send: ((message: unknown) => void) | null;
}

export class HostedSessions {
  private sessions = new Map<string, HostedSession>();

  constructor(private readonly deps: Deps) {}

  get size(): number {
    return this.sessions.size;
  }

  start(principal: Principal): HostedSession {
    this.sweep();
    const mine = [...this.sessions.values()].filter((s) => s.tokenId === principal.tokenId);
    if (mine.length >= SESSIONS_PER_TOKEN) this.end(mine[0]!.id);
    const session: HostedSession = {
      id: crypto.randomUUID(),
      tokenId: principal.tokenId,
      usedAt: Date.now(),
      closeStream: null,
      send: null,
      subscriptions: new StreamSubscriptions((uri) => session.send?.({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri } })),
    };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The session with this id when this instance holds it for this token; another token's session is no one's. */
  find(id: string | null, principal: Principal): HostedSession | null {
    const session = id ? this.sessions.get(id) : undefined;
    if (!session || session.tokenId !== principal.tokenId) return null;
    session.usedAt = Date.now();
    return session;
  }

  end(id: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    session.subscriptions.close();
    session.closeStream?.();
  }

  /**
   * GET /mcp in a session: the event stream its notifications go to, one at a time. It takes a
   * follow slot of the token, is ended at shutdown like any follow, and once `stillAllowed`
   * (asked at every heartbeat) throws: a revoked token hears nothing more, and a client whose
   * hour-long OAuth access token ran out reopens it with the refreshed one (same grant, same session).
   */
  openStream(session: HostedSession, principal: Principal, signal: AbortSignal, stillAllowed: () => Promise<unknown>): Response {
    if (session.closeStream) return Response.json({ error: "conflict", error_description: "this session's event stream is already open" }, { status: 409 });
    const registry = followers(this.deps);
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const write = (text: string) => {
      try {
        controller.enqueue(encoder.encode(text));
      } catch {
        close();
      }
    };
    const release = registry.hold({ key: `token:${principal.tokenId}`, workspaceId: principal.workspaceId, signal, stillAllowed, beat: () => write(": heartbeat\n\n") }, () => close());
    const close = () => {
      if (session.closeStream !== close) return;
      session.closeStream = session.send = null;
      session.usedAt = Date.now();
      release();
      try {
        controller.close();
      } catch {}
    };
    session.closeStream = close;
    session.send = (message) => write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    const body = new ReadableStream<Uint8Array>({ start: (c) => void ((controller = c), write(": session events\n\n")), cancel: close });
    if (registry.closing) close();
    return new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" } });
  }

  /** Forgets sessions nobody has used for SESSION_IDLE_MS and that hold no open stream. */
  private sweep(): void {
    const before = Date.now() - SESSION_IDLE_MS;
    for (const s of [...this.sessions.values()]) if (!s.closeStream && s.usedAt < before) this.end(s.id);
  }
}

const registries = new WeakMap<Deps, HostedSessions>();

/** The sessions this instance holds (one registry per set of deps). */
export function hostedSessions(deps: Deps): HostedSessions {
  let r = registries.get(deps);
  if (!r) registries.set(deps, (r = new HostedSessions(deps)));
  return r;
}
