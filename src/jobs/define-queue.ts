import type { Static, TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { Deps } from "../deps";
import { cancelSerial, enqueue, type EnqueueOptions, type JobRow } from "./queue";
import type { InWriteOutcome, JobHandler, JobOutcome, Settled } from "./runner";

/** What a feature writes for one queue: the work, given a payload already decoded and checked. */
export interface QueueHandler<P> {
  /** As `JobHandler.run`: the outcome, or a function that computes it inside the settling write. */
  run: (deps: Deps, payload: P, job: JobRow) => Promise<JobOutcome | InWriteOutcome>;
  /** Runs in the write that fails the job for good; not for a payload that never decoded. */
  onFailed?: (deps: Deps, payload: P, error: string) => void | Promise<void>;
  /** Told once an attempt's outcome has committed (log lines, metrics); not for a payload that never decoded. */
  settled?: (deps: Deps, payload: P, job: JobRow, settled: Settled) => void | Promise<void>;
}

export type Decoded<P> = { ok: true; payload: P } | { ok: false; error: string };

/** A named queue whose payloads are typed where they are enqueued and checked where they are run. */
export interface Queue<P> extends JobHandler {
  readonly name: string;
  /** Adds a job inside the caller's write (see `enqueue` in queue.ts). */
  enqueue: (deps: Deps, payload: P, opts?: EnqueueOptions) => Promise<number>;
  /** Fails this queue's unfinished jobs of one serial key (inside the caller's write). */
  cancelSerial: (deps: Deps, serialKey: string, reason: string) => Promise<number>;
  /** Reads a stored payload; a row written by another version or by hand may not decode. */
  decode: (raw: string) => Decoded<P>;
}

/**
 * Defines a queue as liteque does: the schema is the payload's type, and the stored JSON is
 * checked against it before the handler sees it. A payload that does not decode would fail the
 * same way at every retry, so its job fails at once, naming the field.
 */
export function defineQueue<S extends TSchema>(name: string, schema: S, handler: QueueHandler<Static<S>>): Queue<Static<S>> {
  const check = TypeCompiler.Compile(schema);
  const decode = (raw: string): Decoded<Static<S>> => {
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      return { ok: false, error: `the ${name} job's payload is not JSON: ${(e as Error).message}` };
    }
    if (check.Check(value)) return { ok: true, payload: value };
    const first = check.Errors(value).First();
    const where = first?.path ? ` at ${first.path}` : "";
    return { ok: false, error: `the ${name} job's payload does not match its schema${where}: ${first?.message ?? "invalid"}` };
  };
  return {
    name,
    decode,
    enqueue: (deps, payload, opts) => enqueue(deps, name, payload, opts),
    cancelSerial: (deps, serialKey, reason) => cancelSerial(deps, name, serialKey, reason),
    run: async (deps, job) => {
      const d = decode(job.payload);
      return d.ok ? handler.run(deps, d.payload, job) : { fail: d.error };
    },
    onFailed: async (deps, job, error) => {
      const d = decode(job.payload);
      if (d.ok) await handler.onFailed?.(deps, d.payload, error);
    },
    settled: async (deps, job, settled) => {
      if (!handler.settled) return;
      const d = decode(job.payload);
      if (d.ok) await handler.settled(deps, d.payload, job, settled);
    },
  };
}

/** Queue name → handler, for the runner; two queues of one name are a wiring mistake. */
export function queueRegistry(queues: readonly (JobHandler & { readonly name: string })[]): Record<string, JobHandler> {
  const registry: Record<string, JobHandler> = {};
  for (const q of queues) {
    if (registry[q.name]) throw new Error(`two job queues are named ${q.name}`);
    registry[q.name] = q;
  }
  return registry;
}
