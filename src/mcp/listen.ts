// subscriptions/listen (revision 2026-07-28): one long request whose filter names the resources a
// client wants `notifications/resources/updated` of. The SDK serves the stream and filters what is
// published onto it; which streams to follow, and whether the caller may, is ours: each address
// is followed as `resources/subscribe` follows it, and the filter keeps only those followed, so
// the acknowledgement's honoured filter says what will really arrive.
import type { JSONRPCRequest, RequestId } from "@modelcontextprotocol/server";
import type { NotesBackend } from "./backend";
import { StreamSubscriptions } from "./subscriptions";

/** The resource addresses a listen request asks for, when it asks for any. */
export function listenedUris(message: JSONRPCRequest): string[] | null {
  const uris = (message.params as { notifications?: { resourceSubscriptions?: unknown } } | undefined)?.notifications?.resourceSubscriptions;
  return Array.isArray(uris) && uris.every((u) => typeof u === "string") ? (uris as string[]) : null;
}

/**
 * Follows each address of a listen request; the request with only the addresses followed (an
 * address of no note, of someone else's, or beyond a pinned token's note is dropped), and the
 * subscriptions to close when the listen ends.
 */
export async function followListen(backend: NotesBackend, message: JSONRPCRequest, updated: (uri: string) => void): Promise<{ message: JSONRPCRequest; subscriptions: StreamSubscriptions }> {
  const subscriptions = new StreamSubscriptions(updated);
  const uris = listenedUris(message);
  if (!uris) return { message, subscriptions };
  const kept: string[] = [];
  for (const uri of new Set(uris)) {
    try {
      await subscriptions.subscribe(backend, uri);
      kept.push(uri);
    } catch {
      // Not honoured: the acknowledgement leaves it out, which is how listen says no to one address.
    }
  }
  const params = message.params as { notifications: Record<string, unknown> };
  return { message: { ...message, params: { ...params, notifications: { ...params.notifications, resourceSubscriptions: kept } } }, subscriptions };
}

/** The listens of one stdio connection, each with its follows, ended by its cancellation or the connection's end. */
export class ListenFollows {
  private readonly open = new Map<RequestId, StreamSubscriptions | null>();

  constructor(
    private readonly backend: NotesBackend,
    private readonly updated: (uri: string) => void,
  ) {}

  /** The listen request to pass on once its streams are followed; null when it was cancelled meanwhile. */
  async start(message: JSONRPCRequest): Promise<JSONRPCRequest | null> {
    this.open.set(message.id, null);
    const followed = await followListen(this.backend, message, this.updated);
    if (!this.open.has(message.id)) {
      followed.subscriptions.close();
      return null;
    }
    this.open.set(message.id, followed.subscriptions);
    return followed.message;
  }

  cancel(id: RequestId): void {
    if (!this.open.has(id)) return;
    this.open.get(id)?.close();
    this.open.delete(id);
  }

  close(): void {
    for (const id of [...this.open.keys()]) this.cancel(id);
  }
}
