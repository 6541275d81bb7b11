// In-process cost of one append through the full handler (no network): a profiling aid.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildHandler } from "../src/app";
import { loadConfig } from "../src/config";
import { createAccount } from "../src/modules/accounts/service";
import { mintToken } from "../src/modules/tokens/service";
import { createDeps } from "../src/runtime";

const dir = mkdtempSync(join(tmpdir(), "ns-inproc-"));
const deps = createDeps(
  loadConfig({ NOTESTREAM_DATA_DIR: dir, NOTESTREAM_LIMIT_PROFILE: "unlimited", NOTESTREAM_LOG_REQUESTS: process.env.LOG ?? "false", NOTESTREAM_SYNCHRONOUS: process.env.SYNC ?? "NORMAL" }),
);
const handle = buildHandler(deps);
const a = await deps.writer.write(() => createAccount(deps, { email: "p@example.com", plan: "dev" }));
const { token } = await deps.writer.write(() => mintToken(deps, { accountId: a.account.id, workspaceId: a.workspaceId, scopes: ["read", "write"] }));
const body = JSON.stringify({ text: "x".repeat(100) });
const req = () =>
  new Request("http://localhost/api/v1/notes/by-filename/bench.log/append", {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": String(body.length) },
    body,
  });
const N = Number(process.env.N ?? 20000);
const CONC = Number(process.env.CONC ?? 50);
for (let i = 0; i < 2000; i++) await handle(req(), "127.0.0.1");
let best = Infinity;
for (let round = 0; round < 3; round++) {
  const t0 = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: CONC }, async () => {
      while (done < N) {
        done++;
        const r = await handle(req(), "127.0.0.1");
        if (r.status >= 300) throw new Error(`status ${r.status}: ${await r.text()}`);
        await r.arrayBuffer();
      }
    }),
  );
  best = Math.min(best, performance.now() - t0);
}
console.log(`${N} appends, best of 3: ${((best * 1000) / N).toFixed(1)} µs each, ${Math.round((N / best) * 1000)}/s (${(deps.writer.stats.writes / deps.writer.stats.batches).toFixed(1)} writes per commit)`);
