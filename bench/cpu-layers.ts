/**
 * CPU time per append in process, at three depths of the path, for one source tree: the writer
 * alone (a trivial coalesced write), the service (appendByFilename and the writer), and the
 * whole handler (the harness's request, no network). 50 appends at a time, 7 repetitions; prints
 * the minimum and the median of the process's CPU time per append. Run two trees alternately,
 * each in its own process, to see where a difference between them lies:
 *
 *   git worktree add /tmp/base <commit> && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   for i in 1 2 3; do for t in /tmp/base "$PWD"; do (cd $t && MODE=service bun "$OLDPWD/bench/cpu-layers.ts" $t); done; done
 *
 * Environment: MODE (http, service or writer; default http), ROUNDS (default 1000).
 */
import { resolve } from "node:path";

const root = resolve(process.argv[2] ?? ".");
const MODE = process.env.MODE ?? "http";
const { harness } = await import(`${root}/test/helpers/harness.ts`);
const { appendByFilename } = await import(`${root}/src/modules/streams/append/service.ts`);
const h = await harness({ profile: "unlimited" });
const a = await h.account("dev");
const token = await h.token(a, ["read", "write"]);
await h.request("POST", "/api/v1/notes/by-filename/micro.log/append", { token, body: { text: "first" } });
const principal = h.deps.tokens.get(token);
if (!principal) throw new Error("no principal cached");
const ctx = { deps: h.deps, principal };
const C = 50, ROUNDS = Number(process.env.ROUNDS ?? 1000);
const one = (i: number): Promise<unknown> =>
  MODE === "http" ? h.request("POST", "/api/v1/notes/by-filename/micro.log/append", { token, body: { text: `line ${i} of a micro benchmark` } })
  : MODE === "service" ? appendByFilename({ ctx, filename: "micro.log", text: `line ${i} of a micro benchmark` })
  : h.deps.writer.write(() => i, { coalesce: true });
const round = () => Promise.all(Array.from({ length: C }, (_, i) => one(i)));
for (let i = 0; i < 100; i++) await round();
const results: number[] = [];
for (let rep = 0; rep < 7; rep++) {
  const c0 = process.cpuUsage();
  for (let i = 0; i < ROUNDS; i++) await round();
  const c = process.cpuUsage(c0);
  results.push((c.user + c.system) / (ROUNDS * C));
}
results.sort((x, y) => x - y);
console.log(MODE, root.padEnd(14), "cpu us/append min", results[0]!.toFixed(2), "med", results[3]!.toFixed(2));
await h.close();
