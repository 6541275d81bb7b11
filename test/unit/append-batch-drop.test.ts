import { describe, expect, test } from "bun:test";
import { overlayDb } from "../helpers/overlay-db";

/** The tables an append's overlay writes, with one note and one workspace. */
function counters() {
  const { db, batch, writer } = overlayDb();
  const chunks = () => db.query<{ text: string }, []>("SELECT text FROM note_chunks ORDER BY seq").all().map((c) => c.text);
  /** An append as the service makes it: drop the oldest pending lines first, then add its own. */
  const line = (text: string, opts: { drop?: number; fail?: boolean } = {}) =>
    writer.write(
      () => {
        if (opts.drop) batch.dropPending("n", opts.drop);
        batch.addText("n", text);
        if (opts.fail) throw Object.assign(new Error("refused"), { status: 422 });
      },
      { coalesce: true },
    );
  return { db, batch, writer, chunks, line };
}

describe("dropping a batch's own pending lines (retention drop_oldest)", () => {
  test("the oldest pending lines go, the rest keep their order in the batch's chunk", async () => {
    const { chunks, line } = counters();
    await Promise.all([line("a\n"), line("b\n"), line("c\n", { drop: 2 }), line("d\n"), line("e\n", { drop: 1 })]);
    expect(chunks()).toEqual(["d\ne\n"]);
  });

  test("a refused write's drop is undone by the journal: the lines it dropped are back, in place", async () => {
    const { chunks, line } = counters();
    const results = await Promise.allSettled([line("a\n"), line("b\n"), line("x\n", { drop: 2, fail: true }), line("c\n")]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(chunks()).toEqual(["a\nb\nc\n"]);
  });

  test("a nested part that drops and then throws is undone; the write's earlier drop stands", async () => {
    const { batch, writer, chunks, line } = counters();
    const first = [line("a\n"), line("b\n"), line("c\n")];
    const nested = writer.write(
      async () => {
        batch.dropPending("n", 1);
        try {
          await writer.nested(() => {
            batch.dropPending("n", 2);
            batch.addText("n", "lost\n");
            throw new Error("half-done");
          });
        } catch {}
        batch.addText("n", "kept\n");
      },
      { coalesce: true },
    );
    await Promise.all([...first, nested]);
    expect(chunks()).toEqual(["b\nc\nkept\n"]);
  });
});
