import { buildHandler } from "./app";
import type { Deps } from "./deps";
import { flushLog } from "./http/log";
import { JobRunner } from "./jobs/runner";
import { jobHandlers } from "./queues";
import { runAllTasks, startPeriodicTasks } from "./schedule";

function log(fields: Record<string, unknown>): void {
  flushLog();
  console.log(JSON.stringify({ time: new Date().toISOString(), level: "info", ...fields }));
}

/** Serves until SIGTERM or SIGINT, then stops accepting, lets in-flight requests and commits finish, and exits 0. */
export async function serve(deps: Deps): Promise<void> {
  // Time-driven transitions that fell due while the service was down are applied before serving.
  const runner = new JobRunner(deps, jobHandlers);
  await runner.start();
  await runAllTasks(deps);
  const scheduler = startPeriodicTasks(deps);
  const handle = buildHandler(deps);
  const server = Bun.serve({
    port: deps.config.port,
    hostname: deps.config.host,
    // A backstop far above every cap: the boundary answers oversized bodies itself, in the envelope.
    maxRequestBodySize: 64 * 1024 * 1024,
    fetch: (request, srv) => handle(request, () => srv.requestIP(request)?.address),
  });
  log({ msg: "listening", url: `http://${server.hostname}:${server.port}`, port: server.port, data_dir: deps.config.dataDir });
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log({ msg: "shutting down", signal });
    scheduler.stop();
    await server.stop(false);
    // Deliveries in flight finish (each is bounded by its timeouts); unstarted ones wait in the queue.
    await runner.stop();
    await deps.writer.idle();
    deps.db.$client.close();
    flushLog();
    log({ msg: "stopped" });
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}
