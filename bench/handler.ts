/**
 * The full append handler of a source tree, without the network: a data dir, a Dev account and
 * a token, and a runner that sends appends from concurrent callers (bench/inproc.ts, bench/ab.ts).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Deps } from "../src/deps";

export interface AppendHandler {
  deps: Deps;
  /** `n` appends from `concurrency` callers; the wall time per append in µs. */
  run(n: number, concurrency?: number): Promise<number>;
}

/** `root`: the source tree (this one, or another checkout to compare with). */
export async function appendHandler(root: string, env: { log: string; sync: string; text?: string }): Promise<AppendHandler> {
  const { buildHandler } = await import(join(root, "src/app.ts"));
  const { loadConfig } = await import(join(root, "src/config.ts"));
  const { createAccount } = await import(join(root, "src/modules/accounts/service.ts"));
  const { mintToken } = await import(join(root, "src/modules/tokens/service.ts"));
  const { openSqliteDeps } = await import(join(root, "src/runtime.ts"));
  const deps: Deps = openSqliteDeps(
    loadConfig({
      NOTESTREAM_DATA_DIR: mkdtempSync(join(tmpdir(), "ns-handler-")),
      NOTESTREAM_LIMIT_PROFILE: "unlimited",
      NOTESTREAM_LOG_REQUESTS: env.log,
      NOTESTREAM_SYNCHRONOUS: env.sync,
    }),
  );
  const handle = buildHandler(deps);
  const a = await deps.writer.write(() => createAccount(deps, { email: "bench@example.com", plan: "dev" }));
  const { token } = await deps.writer.write(() => mintToken(deps, { accountId: a.account.id, workspaceId: a.workspaceId, scopes: ["read", "write"] }));
  const body = JSON.stringify({ text: env.text ?? "x".repeat(100) });
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": String(body.length) };
  const request = () => new Request("http://localhost/api/v1/notes/by-filename/bench.log/append", { method: "POST", headers, body });
  return {
    deps,
    async run(n, concurrency = 50) {
      let started = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (started < n) {
            started++;
            const r = await handle(request(), "127.0.0.1");
            if (r.status >= 300) throw new Error(`status ${r.status}: ${await r.text()}`);
            await r.arrayBuffer();
          }
        }),
      );
      return ((performance.now() - t0) * 1000) / n;
    },
  };
}
