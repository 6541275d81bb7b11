// The stdio server's subscriptions: it holds no database, so it follows the stream's lines as any
// client does (GET …/lines with Accept: text/event-stream, README "Following live").
import { ToolFailure } from "./backend";

/** How long a dropped follow waits before it reconnects (the server's own `retry:`). */
const RECONNECT_MS = 2_000;

type Body = ReadableStream<Uint8Array>;

/**
 * Follows `url` after the cursor `after` until `signal` aborts: `changed` once per read that
 * brought new lines. Resolves once the follow is open, or fails as the server refused it (a
 * token's follows are capped: rate_limited), so a subscription never waits on a follow that is
 * not there. One that drops later reconnects with Last-Event-ID, so lines appended meanwhile
 * still count.
 */
export async function followEvents(url: string, token: string, after: string, changed: () => void, signal: AbortSignal): Promise<void> {
  let lastEventId = after;
  const open = async (): Promise<Body> => {
    const headers = { authorization: `Bearer ${token}`, accept: "text/event-stream", "user-agent": "notestream-mcp/1", "last-event-id": lastEventId };
    const res = await fetch(url, { headers, signal });
    if (res.ok && res.body) return res.body;
    const err = ((await res.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null)?.error;
    throw new ToolFailure(err?.code ?? `http_${res.status}`, err?.message ?? `HTTP ${res.status}`);
  };
  const read = async (body: Body) => {
    let pending = "";
    const decoder = new TextDecoder();
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      pending += decoder.decode(chunk, { stream: true });
      const events = pending.split("\n\n");
      pending = events.pop() ?? "";
      let lines = false;
      for (const event of events) {
        const id = /^id: ?(.*)$/m.exec(event)?.[1];
        if (id) lastEventId = id;
        if (/^data:/m.test(event)) lines = true;
      }
      if (lines) changed();
    }
  };
  let body: Body | null = await open();
  void (async () => {
    while (!signal.aborted) {
      if (body) await read(body).catch(() => {});
      if (signal.aborted) return;
      await new Promise((r) => setTimeout(r, RECONNECT_MS));
      body = await open().catch(() => null);
    }
  })();
}
