import type { Server } from "bun";

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

/**
 * A real HTTP server on loopback that records what it receives. `respond` decides each answer;
 * by default 200. Tests point webhooks at `url` (with NOTESTREAM_WEBHOOK_ALLOW_CIDRS opening loopback).
 */
export function receiver(respond?: (req: Received, n: number) => Response | Promise<Response>) {
  const received: Received[] = [];
  let waiters: { count: number; resolve: () => void }[] = [];
  const server: Server<undefined> = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const r: Received = {
        path: new URL(request.url).pathname,
        headers: Object.fromEntries(request.headers),
        body: await request.text(),
        at: Date.now(),
      };
      received.push(r);
      waiters = waiters.filter((w) => (received.length >= w.count ? (w.resolve(), false) : true));
      return respond ? respond(r, received.length) : new Response("ok");
    },
  });
  return {
    received,
    url: `http://127.0.0.1:${server.port}`,
    port: server.port,
    /** Resolves once `count` requests have arrived (bounded by `ms`). */
    waitFor(count: number, ms = 5000): Promise<void> {
      if (received.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${received.length} of ${count} requests in ${ms} ms`)), ms);
        waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
      });
    },
    stop: () => server.stop(true),
  };
}
