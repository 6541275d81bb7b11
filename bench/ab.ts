/**
 * Two source trees' append handlers, side by side in one process, in alternating short rounds:
 * the only in-process comparison that resolves a few percent on a VM whose speed drifts by a
 * third within minutes (the same tree against itself reads about 1.00).
 *
 *   git worktree add /tmp/base HEAD~1 && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   bun bench/ab.ts /tmp/base . > /dev/null      # the result goes to stderr
 *
 * Environment: LOG (request log on, default true), SYNC (NORMAL or FULL), ROUNDS (default 20).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

async function setup(root: string): Promise<(n: number) => Promise<number>> {
  const { buildHandler } = await import(join(root, "src/app.ts"));
  const { loadConfig } = await import(join(root, "src/config.ts"));
  const { createAccount } = await import(join(root, "src/modules/accounts/service.ts"));
  const { mintToken } = await import(join(root, "src/modules/tokens/service.ts"));
  const { createDeps } = await import(join(root, "src/runtime.ts"));
  const deps = createDeps(
    loadConfig({
      NOTESTREAM_DATA_DIR: mkdtempSync(join(tmpdir(), "ns-ab-")),
      NOTESTREAM_LIMIT_PROFILE: "unlimited",
      NOTESTREAM_LOG_REQUESTS: process.env.LOG ?? "true",
      NOTESTREAM_SYNCHRONOUS: process.env.SYNC ?? "NORMAL",
    }),
  );
  const handle = buildHandler(deps);
  const a = await deps.writer.write(() => createAccount(deps, { email: "ab@example.com", plan: "dev" }));
  const { token } = await deps.writer.write(() => mintToken(deps, { accountId: a.account.id, workspaceId: a.workspaceId, scopes: ["read", "write"] }));
  const body = JSON.stringify({ text: "x".repeat(100) });
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": String(body.length) };
  const request = () => new Request("http://localhost/api/v1/notes/by-filename/bench.log/append", { method: "POST", headers, body });
  // n appends from 50 concurrent callers; µs per append.
  return async (n) => {
    let started = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (started < n) {
          started++;
          const r = await handle(request(), "127.0.0.1");
          if (r.status >= 300) throw new Error(`status ${r.status}: ${await r.text()}`);
          await r.arrayBuffer();
        }
      }),
    );
    return ((performance.now() - t0) * 1000) / n;
  };
}

const [treeA, treeB] = process.argv.slice(2).map((p) => resolve(p));
if (!treeA || !treeB) {
  console.error("usage: bun bench/ab.ts <source tree A> <source tree B>");
  process.exit(2);
}
const A = await setup(treeA);
const B = await setup(treeB);
await A(5000);
await B(5000);
const rounds = Number(process.env.ROUNDS ?? 20);
const a: number[] = [];
const b: number[] = [];
for (let i = 0; i < rounds; i++) {
  // Alternate which goes first, so a drift within a pair favours neither.
  if (i % 2) {
    b.push(await B(3000));
    a.push(await A(3000));
  } else {
    a.push(await A(3000));
    b.push(await B(3000));
  }
}
const median = (v: number[]) => [...v].sort((x, y) => x - y)[v.length >> 1]!;
const ratios = a.map((x, i) => b[i]! / x);
console.error(
  `A ${median(a).toFixed(2)} µs, B ${median(b).toFixed(2)} µs per append (medians); B/A ${median(ratios).toFixed(3)}, B faster in ${ratios.filter((r) => r < 1).length} of ${rounds} rounds`,
);
