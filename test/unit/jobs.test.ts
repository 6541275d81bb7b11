import { afterEach, describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { eq } from "drizzle-orm";
import { jobs } from "../../src/db/tables";
import { defineQueue, queueRegistry } from "../../src/jobs/define-queue";
import { enqueue } from "../../src/jobs/queue";
import { JobRunner } from "../../src/jobs/runner";
import { mailQueue } from "../../src/mail/queue";
import { exportQueue } from "../../src/modules/export/service";
import { inboxQueue } from "../../src/modules/inbox/queue";
import { webhookDelivery } from "../../src/modules/webhooks/delivery";
import { harness, type Harness } from "../helpers/harness";

let h: Harness;
let runner: JobRunner | undefined;
afterEach(async () => {
  if (!runner) return;
  await runner.stop();
  runner = undefined;
  await h.close();
});

/** A queue of its own, run by a runner that knows only it (the harness's runner is stopped). */
async function setup() {
  h = await harness();
  await h.jobs.stop();
  const ran: { count: number }[] = [];
  const failed: { payload: { count: number }; error: string }[] = [];
  const counter = defineQueue("counter", Type.Object({ count: Type.Integer() }), {
    run: async (_deps, payload) => {
      ran.push(payload);
      return { ok: true };
    },
    onFailed: (_deps, payload, error) => {
      failed.push({ payload, error });
    },
  });
  runner = new JobRunner(h.deps, queueRegistry([counter]));
  await runner.start();
  const job = async (id: number) => {
    const [row] = await h.deps.db.select({ status: jobs.status, attempts: jobs.attempts, last_error: jobs.lastError }).from(jobs).where(eq(jobs.id, id));
    return row!;
  };
  return { counter, ran, failed, job, runner };
}

describe("typed job queues", () => {
  test("the handler gets the decoded payload it was enqueued with", async () => {
    const { counter, ran, job, runner } = await setup();
    const id = await h.deps.writer.write(() => counter.enqueue(h.deps, { count: 3 }));
    await runner.drain();
    expect(ran).toEqual([{ count: 3 }]);
    expect(await job(id)).toEqual({ status: "done", attempts: 1, last_error: null });
  });

  test("a payload that does not match its schema fails the job at its first attempt, naming the field; the handler never sees it", async () => {
    const { counter, ran, failed, job, runner } = await setup();
    // A row the typed enqueue would refuse to write: from another version, or by hand.
    const bad = await h.deps.writer.write(() => enqueue(h.deps, "counter", { count: "three" }, { serialKey: "k" }));
    const after = await h.deps.writer.write(() => counter.enqueue(h.deps, { count: 4 }, { serialKey: "k" }));
    await runner.drain();
    const row = await job(bad);
    expect(row.status).toBe("failed");
    expect(row.attempts).toBe(1);
    expect(row.last_error).toBe("the counter job's payload does not match its schema at /count: Expected integer");
    // onFailed is typed: it is not called with a payload that never decoded.
    expect(failed).toEqual([]);
    // A dead job no longer holds its serial key: the next one runs.
    expect(ran).toEqual([{ count: 4 }]);
    expect((await job(after)).status).toBe("done");
  });

  test("a payload that is not JSON fails the job at once with a clear error instead of crashing the runner", async () => {
    const { ran, job, runner } = await setup();
    const id = await h.deps.writer.write(async () => {
      const now = h.deps.clock.now();
      const [row] = await h.deps.db
        .insert(jobs)
        .values({ queue: "counter", payload: "{not json", serialKey: null, runAt: now, maxAttempts: 9, createdAt: now })
        .returning({ id: jobs.id });
      return row!.id;
    });
    await runner.drain();
    const row = await job(id);
    expect(row).toMatchObject({ status: "failed", attempts: 1 });
    expect(row.last_error).toStartWith("the counter job's payload is not JSON: ");
    expect(ran).toEqual([]);
  });

  test("payloads stored before the queues were typed still decode, field for field", () => {
    const stored = {
      webhook: [webhookDelivery, '{"deliveryId":"dlv_1","noteId":"not_1","createdAt":"2026-11-22T10:00:00.000Z","text":"a line\\n","byteSize":42,"updatedAt":"2026-11-22T10:00:00.000Z"}'],
      inbox: [inboxQueue, '{"deliveryId":"ibx_1"}'],
      mail: [mailQueue, '{"to":"a@example.com","subject":"s","text":"t"}'],
      export: [exportQueue, '{"exportId":"exp_1","origin":"http://localhost:8080"}'],
    } as const;
    for (const [name, [queue, raw]] of Object.entries(stored)) {
      expect(queue.name).toBe(name);
      expect(queue.decode(raw)).toEqual({ ok: true, payload: JSON.parse(raw) });
    }
  });

  test("two queues of one name are a wiring mistake, refused at start", () => {
    const a = defineQueue("same", Type.Object({}), { run: async () => ({ ok: true }) });
    expect(() => queueRegistry([a, a])).toThrow("two job queues are named same");
  });

  test("a claim whose batch fails is logged and tried again, not an unhandled rejection that ends the process", async () => {
    const { counter, ran, runner } = await setup();
    // The writer's next write fails, as a batch does when PostgreSQL restarts or another write aborts it.
    const write = h.deps.writer.write.bind(h.deps.writer);
    let failures = 0;
    h.deps.writer.write = ((run: () => unknown, opts?: { coalesce?: boolean }) => {
      if (failures++ === 0) return Promise.reject(new Error("connection lost"));
      return write(run, opts);
    }) as typeof h.deps.writer.write;
    const logged: string[] = [];
    const error = console.error;
    console.error = (line: string) => void logged.push(String(line));
    try {
      // Enqueued past the failing writer: the wake it sends makes the claim the next write.
      await write(() => counter.enqueue(h.deps, { count: 5 }));
      await Bun.sleep(20);
    } finally {
      console.error = error;
    }
    expect(logged.filter((l) => l.includes("could not claim jobs") && l.includes("connection lost"))).toHaveLength(1);
    await runner.drain();
    expect(ran).toEqual([{ count: 5 }]);
  });
});
