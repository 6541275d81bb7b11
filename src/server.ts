import { buildHandler } from "./app";
import type { Deps } from "./deps";
import { markServing } from "./db/data-dir";
import { flushLog } from "./http/log";
import { JobRunner } from "./jobs/runner";
import { followers } from "./modules/streams/follow";
import { jobHandlers } from "./queues";
import { runAllTasks, startPeriodicTasks } from "./schedule";

function log(fields: Record<string, unknown>): void {
  flushLog();
  console.log(JSON.stringify({ time: new Date().toISOString(), level: "info", ...fields }));
}

/** Serves until SIGTERM or SIGINT, then stops accepting, lets in-flight requests and commits finish, and exits 0. */
export async function serve(deps: Deps): Promise<void> {
  // Room for deletes and purges on a full disk (db/disk-space.ts), held before anything is written.
  deps.disk.hold(deps.config.diskReserveBytes);
  // Time-driven transitions that fell due while the service was down are applied before serving.
  const runner = new JobRunner(deps, jobHandlers);
  await runner.start();
  await runAllTasks(deps);
  const scheduler = startPeriodicTasks(deps);
  const server = listen(deps, servedBy(buildHandler(deps)));
  // `notestream restore` refuses to replace the database under a running server.
  const unmark = markServing(deps.config.dataDir);
  log({ msg: "listening", url: `http://${server.hostname}:${server.port}`, port: server.port, data_dir: deps.config.dataDir });
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log({ msg: "shutting down", signal });
    scheduler.stop();
    // Followed streams never end by themselves: end them, or stop() would wait for them for ever.
    const stopped = server.stop(false);
    followers(deps).closeAll();
    await stopped;
    // Deliveries in flight finish (each is bounded by its timeouts); unstarted ones wait in the queue.
    await runner.stop();
    await deps.writer.idle();
    await deps.close();
    unmark();
    flushLog();
    log({ msg: "stopped" });
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

/** Bun.serve's fetch for the app's handler: what `serve` and notestream/testing both answer with. */
export function servedBy(handle: ReturnType<typeof buildHandler>) {
  return (request: Request, srv: Bun.Server<undefined>) => {
    // A followed stream (SSE) may be quiet between lines for longer than the idle timeout
    // (NOTESTREAM_IDLE_TIMEOUT_SECONDS); its own heartbeat and hang-up detection take over.
    if (request.method === "GET" && request.headers.get("accept")?.includes("text/event-stream")) srv.timeout(request, 0);
    return handle(request, () => srv.requestIP(request)?.address);
  };
}

/** The service could not start; the message is the whole story (no stack trace for the operator). */
export class StartupError extends Error {}

/**
 * Listens on the configured host and port. With port 0 the system picks a free one, which then
 * becomes the configured port: mail links made without a base URL name it (http/origin.ts).
 */
export function listen(deps: Deps, fetch: (request: Request, srv: Bun.Server<undefined>) => Response | Promise<Response>): Bun.Server<undefined> {
  let server: Bun.Server<undefined>;
  try {
    server = Bun.serve({
      port: deps.config.port,
      hostname: deps.config.host,
      idleTimeout: deps.config.idleTimeoutSeconds,
      // No limit of the runtime's: it would answer a larger body with an empty 413 outside the error
      // envelope. The boundary caps every body it lets the app read (http/body-limit.ts).
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      fetch,
    });
  } catch (e) {
    if ((e as { code?: string }).code === "EADDRINUSE") {
      throw new StartupError(`port ${deps.config.port} on ${deps.config.host} is already in use (another notestream?); set NOTESTREAM_PORT to a free one`);
    }
    throw e;
  }
  deps.config.port = server.port!;
  return server;
}
