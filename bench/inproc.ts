// In-process cost of one append through the full handler (no network): a profiling aid.
import { join } from "node:path";
import { appendHandler } from "./handler";

const h = await appendHandler(join(import.meta.dir, ".."), { log: process.env.LOG ?? "false", sync: process.env.SYNC ?? "NORMAL" });
const N = Number(process.env.N ?? 20000);
const CONC = Number(process.env.CONC ?? 50);
await h.run(2000, 1);
let best = Infinity;
for (let round = 0; round < 3; round++) best = Math.min(best, await h.run(N, CONC));
const stats = h.deps.writer.stats;
console.log(`${N} appends, best of 3: ${best.toFixed(1)} µs each, ${Math.round(1e6 / best)}/s (${(stats.writes / stats.batches).toFixed(1)} writes per commit)`);
