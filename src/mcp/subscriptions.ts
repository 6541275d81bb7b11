import { ProtocolError, RPC, type NotesBackend } from "./backend";
import { refOf } from "./uris";

/** Streams one connection may subscribe to: each costs a wake-up per append, nothing more. */
export const MAX_SUBSCRIPTIONS = 100;

/**
 * The streams one connection (a stdio server, a hosted session) is subscribed to: each a follow
 * through the backend, whose appends become `notifications/resources/updated` by `notify`.
 */
export class StreamSubscriptions {
  private open = new Map<string, () => void>();

  constructor(private readonly notify: (uri: string) => void) {}

  get size(): number {
    return this.open.size;
  }

  /** Subscribing twice to one address is one subscription, as unsubscribing once ends it. */
  async subscribe(backend: NotesBackend, uri: string): Promise<void> {
    if (this.open.has(uri)) return;
    if (this.open.size >= MAX_SUBSCRIPTIONS) throw new ProtocolError(RPC.invalidRequest, `rate_limited: a connection subscribes to at most ${MAX_SUBSCRIPTIONS} streams; unsubscribe from one first`);
    const ref = refOf(uri);
    if (!ref) throw new ProtocolError(RPC.invalidParams, `validation_failed: ${uri} is not a notestream resource (notestream://streams/{filename} or notestream://notes/{id})`);
    const stop = await backend.follow(ref, () => this.notify(uri));
    // Two subscribes of one address at once: the first to finish is kept.
    if (this.open.has(uri)) stop();
    else this.open.set(uri, stop);
  }

  unsubscribe(uri: string): void {
    this.open.get(uri)?.();
    this.open.delete(uri);
  }

  close(): void {
    for (const stop of this.open.values()) stop();
    this.open.clear();
  }
}
