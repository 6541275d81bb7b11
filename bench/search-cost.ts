/**
 * What the search index costs an append, in process (no network, no wrk): this tree's append
 * handler twice, side by side, one on a database whose search triggers are dropped (as before the
 * index), in alternating short rounds so that the VM's drift falls on both alike. 100-byte log
 * lines of a dozen words. The wrk figure is `make bench`'s row (BENCH_ONLY=search for it alone).
 *
 *   bun bench/search-cost.ts                         # ROUNDS=20 N=3000 SYNC=NORMAL CONC=50
 *   ROUNDS=2 N=200 bun bench/search-cost.ts          # a smoke run
 */
import { join } from "node:path";
import { appendHandler } from "./handler";
import { dropSearchTriggers, LOG_LINE } from "./lib";

const root = join(import.meta.dir, "..");
const env = { log: process.env.LOG ?? "false", sync: process.env.SYNC ?? "NORMAL", text: LOG_LINE };
const N = Number(process.env.N ?? 3000);
const CONC = Number(process.env.CONC ?? 50);
const rounds = Number(process.env.ROUNDS ?? 20);

const indexed = await appendHandler(root, env);
const plain = await appendHandler(root, env);
dropSearchTriggers(plain.deps.db.$client);
await indexed.run(Math.min(N, 2000), CONC);
await plain.run(Math.min(N, 2000), CONC);

const withIndex: number[] = [];
const without: number[] = [];
for (let i = 0; i < rounds; i++) {
  // Alternate which goes first, so a drift within a pair favours neither.
  if (i % 2) {
    without.push(await plain.run(N, CONC));
    withIndex.push(await indexed.run(N, CONC));
  } else {
    withIndex.push(await indexed.run(N, CONC));
    without.push(await plain.run(N, CONC));
  }
}
const median = (v: number[]) => [...v].sort((x, y) => x - y)[v.length >> 1]!;
const ratios = withIndex.map((x, i) => x / without[i]!);
const perCommit = (h: typeof indexed) => (h.deps.writer.stats.writes / h.deps.writer.stats.batches).toFixed(1);
console.log(
  `${rounds} rounds of ${N} appends (${CONC} callers, ${env.sync}): with the index ${median(withIndex).toFixed(2)} µs, ` +
    `without ${median(without).toFixed(2)} µs per append (medians); with/without ${median(ratios).toFixed(3)}, ` +
    `${perCommit(indexed)} and ${perCommit(plain)} writes per commit`,
);
