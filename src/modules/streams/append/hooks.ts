import type { Deps } from "../../../deps";
import type { Tier } from "../../../limits/plans";
import type { NoteRow } from "../../notes/repo";
import type { Signal } from "./model";

/** One append that passed its checks and is written (in the batch's overlay), as its hooks see it. */
export interface Appended {
  /**
   * The stream's row. It may be the batch's cached one: a hook that changes the row in the
   * database changes this object too, so the batch's later appends see it.
   */
  note: NoteRow;
  /** The line as stored. */
  line: string;
  /** The stream's size with the line. */
  byteSize: number;
  /** The append's time (ms). */
  at: number;
  /** The workspace's plan. */
  tier: Tier;
  /** `?status=` or the body's `status`, when the append reports on a job; else what the stream's rules found (rulesOnAppend, first in the list, sets it). */
  signal: Signal | undefined;
}

/**
 * One side effect of an append (a webhook job, a dead-man alert, a full spell's start and end,
 * live followers), written in its feature's module and listed in the composition root
 * (runtime.ts AFTER_APPEND), in the order they run. The append calls each; none knows the others.
 */
export interface AppendHook {
  /**
   * Inside the append's write, after its checks and its own writes: enqueue what the append
   * causes (a job, a row), so it commits with the append or not at all. It answers a promise
   * only when it waits on the database; most appends cause nothing, and they go on without a
   * pause (maybe-promise.ts). It refuses nothing (the append's checks did): should it throw, the
   * writer undoes the whole append and fails it (db/batch-transaction.ts).
   */
  appended?: (deps: Deps, a: Appended) => Promise<unknown> | undefined;
  /**
   * Once a batch that wrote lines to these streams has committed (before its fsync): what may
   * tell only of lines other connections can read. Must not throw (nothing is left to undo).
   */
  committed?: (deps: Deps, noteIds: readonly string[]) => void;
  /**
   * In the checks of an append that its stream refuses for its size (retention reject, no full
   * spell on): what the refusal causes. The refused append writes nothing, so this queues a
   * write of its own (deps.writer.write), to run after it.
   */
  refusedFull?: (deps: Deps, note: NoteRow) => void;
}

/** The hooks of one service by phase, each in the list's order (AppendBatch.attach). */
export interface AppendHooks {
  appended: readonly NonNullable<AppendHook["appended"]>[];
  committed: readonly NonNullable<AppendHook["committed"]>[];
  refusedFull: readonly NonNullable<AppendHook["refusedFull"]>[];
}

export const NO_HOOKS: AppendHooks = { appended: [], committed: [], refusedFull: [] };

export function hooksByPhase(hooks: readonly AppendHook[]): AppendHooks {
  return {
    appended: hooks.flatMap((h) => (h.appended ? [h.appended] : [])),
    committed: hooks.flatMap((h) => (h.committed ? [h.committed] : [])),
    refusedFull: hooks.flatMap((h) => (h.refusedFull ? [h.refusedFull] : [])),
  };
}

/**
 * Runs the in-write hooks in order, from `from` on: at once while none waits, and after the one
 * that does for the rest (undefined when none waited).
 */
export function runAppended(hooks: AppendHooks["appended"], deps: Deps, a: Appended, from = 0): Promise<unknown> | undefined {
  for (let i = from; i < hooks.length; i++) {
    const waiting = hooks[i]!(deps, a);
    if (waiting) return waiting.then(() => runAppended(hooks, deps, a, i + 1));
  }
  return undefined;
}
