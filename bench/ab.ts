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
import { resolve } from "node:path";
import { appendHandler } from "./handler";

const [treeA, treeB] = process.argv.slice(2).map((p) => resolve(p));
if (!treeA || !treeB) {
  console.error("usage: bun bench/ab.ts <source tree A> <source tree B>");
  process.exit(2);
}
const env = { log: process.env.LOG ?? "true", sync: process.env.SYNC ?? "NORMAL" };
const A = (await appendHandler(treeA, env)).run;
const B = (await appendHandler(treeB, env)).run;
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
