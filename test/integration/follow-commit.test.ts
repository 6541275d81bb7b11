// A follow (SSE) that opens while an append's batch is committing gets the line: on PostgreSQL the
// batch's COMMIT is a round trip, and a follow that registered during it and read from another
// connection before the commit was visible used to wait for the next append (found by
// test/e2e/client.test.ts's `tail -f` across a restart). Timing-dependent: each round opens the
// follow a different moment after the append starts; before the fix a few in 300 missed.
import { afterAll, expect, test } from "bun:test";
import { harness, type Harness } from "../helpers/harness";
import { sseReader } from "../helpers/sse";

let h: Harness;
afterAll(() => h?.close());

test("a follow opened while the append before it commits receives that line", async () => {
  h = await harness({ profile: "unlimited" });
  const token = await h.token(await h.account("dev"));
  const path = "/api/v1/notes/by-filename/race.log";
  const first = await (await h.request("POST", `${path}/append`, { token, body: { text: "line 0" } })).json();
  const lastCursor = async () => (await (await h.request("GET", `/api/v1/notes/${first.id}/lines?last=1`, { token })).json()).lines[0].cursor as string;
  let cursor = await lastCursor();
  const missed: number[] = [];
  for (let i = 1; i <= 300; i++) {
    const appended = h.request("POST", `${path}/append`, { token, body: { text: `line ${i}` } });
    await Bun.sleep((i % 7) * 0.2);
    const res = await h.request("GET", `/api/v1/notes/${first.id}/lines`, { token, headers: { accept: "text/event-stream", "last-event-id": cursor } });
    const events = sseReader(res.body!);
    expect((await appended).status).toBe(200);
    try {
      const [event] = await events.take(1, 1_000);
      expect(JSON.parse(event!.data).text).toBe(`line ${i}`);
      cursor = event!.id!;
    } catch {
      missed.push(i);
      cursor = await lastCursor();
    }
    await events.close();
  }
  expect(missed).toEqual([]);
}, 60_000);
