// The stdio server's subscriptions: it holds no database, so it follows the stream's lines as any
// client does (GET …/lines with Accept: text/event-stream, README "Following live").

/** How long a dropped follow waits before it reconnects (the server's own `retry:`). */
const RECONNECT_MS = 2_000;

/**
 * Follows `url` after the cursor `after` until `signal` aborts: `changed` once per read that
 * brought new lines. A follow that drops reconnects with Last-Event-ID, so lines appended
 * meanwhile still count.
 */
export function followEvents(url: string, token: string, after: string, changed: () => void, signal: AbortSignal): void {
  let lastEventId = after;
  const once = async () => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: "text/event-stream", "user-agent": "notestream-mcp/1" };
    headers["last-event-id"] = lastEventId;
    const res = await fetch(url, { headers, signal });
    if (!res.ok || !res.body) {
      await res.body?.cancel();
      return;
    }
    let pending = "";
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
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
  void (async () => {
    while (!signal.aborted) {
      await once().catch(() => {});
      if (!signal.aborted) await new Promise((r) => setTimeout(r, RECONNECT_MS));
    }
  })();
}
