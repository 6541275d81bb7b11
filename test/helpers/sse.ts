/**
 * Reads a Server-Sent Events body as a client does (the WHATWG event-stream format): events with
 * their id and data, comment lines kept apart, so tests can wait for a number of events.
 */
export interface SseEvent {
  id: string | undefined;
  data: string;
}

export interface SseReader {
  /** Waits until `n` events have arrived that were not taken yet, and takes them. */
  take(n: number, ms?: number): Promise<SseEvent[]>;
  /** Waits until a comment line (": …") has arrived; resolves with every comment so far. */
  comment(ms?: number): Promise<string[]>;
  /** Resolves once the server ended the body (or rejects after `ms`). */
  ended(ms?: number): Promise<void>;
  /** Events that arrived and were not taken. */
  pending(): SseEvent[];
  /** Hangs up, as a client that goes away. */
  close(): Promise<void>;
}

export function sseReader(body: ReadableStream<Uint8Array>): SseReader {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let buf = "";
  let done = false;
  let failure: unknown;
  let wake: () => void = () => {};
  let id: string | undefined;
  let data: string[] = [];

  const line = (l: string) => {
    if (l === "") {
      if (data.length) events.push({ id, data: data.join("\n") });
      data = [];
      id = undefined;
    } else if (l.startsWith(":")) comments.push(l);
    else {
      const at = l.indexOf(":");
      const field = at < 0 ? l : l.slice(0, at);
      const value = at < 0 ? "" : l.slice(at + 1).replace(/^ /, "");
      if (field === "data") data.push(value);
      else if (field === "id") id = value;
    }
  };

  void (async () => {
    try {
      for (;;) {
        const r = await reader.read();
        if (r.done) break;
        buf += decoder.decode(r.value, { stream: true });
        let i: number;
        while ((i = buf.indexOf("\n")) >= 0) {
          line(buf.slice(0, i).replace(/\r$/, ""));
          buf = buf.slice(i + 1);
        }
        wake();
      }
    } catch (e) {
      failure = e;
    }
    done = true;
    wake();
  })();

  async function until(what: string, ok: () => boolean, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (!ok()) {
      if (done) throw new Error(`the event stream ended before ${what}${failure ? `: ${String(failure)}` : ""}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${ms} ms waiting for ${what} (${events.length} events pending)`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  return {
    async take(n, ms = 10_000) {
      await until(`${n} events`, () => events.length >= n, ms);
      return events.splice(0, n);
    },
    async comment(ms = 10_000) {
      await until("a comment", () => comments.length > 0, ms);
      return [...comments];
    },
    async ended(ms = 10_000) {
      const deadline = Date.now() + ms;
      while (!done) {
        if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for the event stream to end`);
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    pending: () => [...events],
    async close() {
      await reader.cancel().catch(() => {});
    },
  };
}
