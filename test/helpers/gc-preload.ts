// A full collection every GC_EVERY_MS ms (default 25) in the test process: a test that needs a
// connection, stream or handle it no longer references fails at once instead of now and then
// (Bun closes the connection of a fetch Response the collector takes). Not part of `make test`:
//   bun test --preload ./test/helpers/gc-preload.ts test/e2e/mcp-stdio.test.ts
const every = Number(process.env.GC_EVERY_MS ?? 25);
setInterval(() => Bun.gc(true), every).unref();
