import type { BatchSink } from "../../../db/writer";
import type { Deps } from "../../../deps";
import type { NoteRow } from "../../notes/repo";
import type { WorkspaceRow } from "../../workspaces/repo";
import { scheduledDeadline, type StreamSchedule } from "../../deadman/schedule";
import { hooksByPhase, NO_HOOKS, type AppendHook, type AppendHooks } from "./hooks";

interface NoteCounters {
  byteSize: number;
  at: number;
  armed: boolean;
  schedule: StreamSchedule | null;
}

/** A batch's lines to one stream, as one chunk row. */
export interface OverlayChunk {
  noteId: string;
  text: string;
  at: number;
}

/**
 * A note's size and write time after the batch; `armed`: it has a dead-man interval (its deadline
 * moves with every write, computed by the database); `dueAt`: for a scheduled stream, its next
 * deadline, computed here once per batch (undefined for any other stream).
 */
export interface OverlayNote {
  id: string;
  byteSize: number;
  at: number;
  armed: boolean;
  dueAt?: number | null;
}

/** How a database writes a batch's overlay: each database's own statements (SQLite's prepared, PostgreSQL's over arrays). */
export interface OverlayWrites {
  apply(chunks: OverlayChunk[], notes: OverlayNote[], storage: [workspaceId: string, delta: number][]): void | Promise<void>;
}

/** A workspace's row and its streams by filename, as appends of one batch found them. */
export interface BatchRows {
  ws: WorkspaceRow;
  streams: Map<string, NoteRow>;
}

const TEXT = 0;
const NOTE = 1;
const STORAGE = 2;
const DROP = 3;

const batches = new WeakMap<Deps, AppendBatch>();

/** The append batch of these deps: their writer's batch sink, attached as runtime.ts builds them. */
export function appendBatchOf(deps: Deps): AppendBatch {
  const batch = batches.get(deps);
  if (!batch) throw new Error("no append batch is attached to these deps (runtime.ts attaches one)");
  return batch;
}

/**
 * What appends write, kept in memory during one writer batch and written once per note and
 * workspace before the batch commits, instead of once per append: the lines themselves (the
 * batch's lines to one stream become one chunk row), a note's size and times, a workspace's
 * storage. Appends read through this overlay; every other write sees it applied first (the
 * writer calls apply() before it), and a failed write's changes are undone.
 *
 * Beside it, `rows`: what appends read, kept for a run of appends in one batch (every append to
 * a stream looks up the same workspace and stream). The writer drops it at each batch and around
 * every other write, which may change those rows; an append's own changes go through the
 * overlay or update the cached row.
 */
export class AppendBatch implements BatchSink {
  private notes = new Map<string, NoteCounters>();
  private texts = new Map<string, string[]>();
  private storage = new Map<string, number>();
  /** What the running write changed, as [kind, key, value before] triples (a dropped line for DROP), newest last. */
  private journal: unknown[] = [];
  /** By workspace id. */
  readonly rows = new Map<string, BatchRows>();
  /** What appends cause (AppendHook), by phase; none until attach(). */
  hooks: AppendHooks = NO_HOOKS;
  private deps: Deps | null = null;
  /**
   * The streams the batch wrote lines to, told to the committed hooks (live followers): kept
   * whether or not anyone follows at apply, since a follow may open while the commit is on its
   * way (on PostgreSQL a round trip) and read from another connection before the lines are visible.
   */
  private written: string[] = [];

  /** `writes`: its database's statements (overlay-sqlite.ts, overlay-pg.ts). */
  constructor(private readonly writes: OverlayWrites) {}

  /**
   * Makes this batch (already their writer's sink) the one these deps' appends go through, and
   * `hooks` what each append causes, run with these deps.
   */
  attach(deps: Deps, hooks: readonly AppendHook[]): void {
    this.deps = deps;
    this.hooks = hooksByPhase(hooks);
    batches.set(deps, this);
  }

  noteSize(noteId: string): number | undefined {
    return this.notes.get(noteId)?.byteSize;
  }

  storageDelta(workspaceId: string): number {
    return this.storage.get(workspaceId) ?? 0;
  }

  /** A line for the stream, in order after the batch's earlier ones. */
  addText(noteId: string, text: string): void {
    let lines = this.texts.get(noteId);
    if (!lines) this.texts.set(noteId, (lines = []));
    lines.push(text);
    this.journal.push(TEXT, noteId, undefined);
  }

  /** The batch's lines to the stream that are not stored yet, oldest first. */
  pendingLines(noteId: string): readonly string[] | undefined {
    return this.texts.get(noteId);
  }

  /**
   * Removes the stream's `count` oldest pending lines (retention drop_oldest, once its stored
   * chunks are gone): a batch of appends larger than the cap keeps only its newest lines.
   */
  dropPending(noteId: string, count: number): void {
    const lines = this.texts.get(noteId)!;
    for (let i = 0; i < count; i++) this.journal.push(DROP, noteId, lines.shift());
  }

  /** `armed`: the note has a dead-man interval; `schedule`: it has a cron schedule (either moves its deadline with every write). */
  setNote(noteId: string, byteSize: number, at: number, armed: boolean, schedule: StreamSchedule | null = null): void {
    const before = this.notes.get(noteId);
    this.notes.set(noteId, { byteSize, at, armed, schedule });
    this.journal.push(NOTE, noteId, before);
  }

  addStorage(workspaceId: string, delta: number): void {
    const before = this.storage.get(workspaceId);
    this.storage.set(workspaceId, (before ?? 0) + delta);
    this.journal.push(STORAGE, workspaceId, before);
  }

  begin(): void {
    this.journal.length = 0;
  }

  mark(): number {
    return this.journal.length;
  }

  rollback(to = 0): void {
    const j = this.journal;
    for (let i = j.length - 3; i >= to; i -= 3) {
      const key = j[i + 1] as string;
      const before = j[i + 2];
      if (j[i] === TEXT) this.texts.get(key)!.pop();
      else if (j[i] === DROP) this.texts.get(key)!.unshift(before as string);
      else if (j[i] === NOTE) before === undefined ? this.notes.delete(key) : this.notes.set(key, before as NoteCounters);
      else before === undefined ? this.storage.delete(key) : this.storage.set(key, before as number);
    }
    j.length = to;
  }

  /** Writes the lines and the counters to their rows (inside the batch's transaction). */
  apply(): void | Promise<void> {
    const chunks: OverlayChunk[] = [];
    if (this.texts.size > 0) {
      // The chunk's time is its note's write time in this batch (set by the same appends).
      for (const [noteId, lines] of this.texts) {
        if (lines.length === 0) continue;
        chunks.push({ noteId, text: lines.length === 1 ? lines[0]! : lines.join(""), at: this.notes.get(noteId)?.at ?? Date.now() });
        this.written.push(noteId);
      }
      this.texts.clear();
    }
    const notes: OverlayNote[] = [];
    for (const [id, { byteSize, at, armed, schedule }] of this.notes) {
      notes.push(schedule === null ? { id, byteSize, at, armed } : { id, byteSize, at, armed, dueAt: scheduledDeadline(schedule, at) });
    }
    this.notes.clear();
    const storage: [string, number][] = [];
    for (const [id, delta] of this.storage) if (delta !== 0) storage.push([id, delta]);
    this.storage.clear();
    this.journal.length = 0;
    if (chunks.length === 0 && notes.length === 0 && storage.length === 0) return;
    return this.writes.apply(chunks, notes, storage);
  }

  committed(): void {
    if (this.written.length === 0) return;
    const noteIds = this.written.splice(0);
    for (const committed of this.hooks.committed) {
      // The batch is committed: a hook's failure is logged, and its writes are answered all the same.
      try {
        committed(this.deps!, noteIds);
      } catch (e) {
        console.error(JSON.stringify({ level: "error", msg: "an after-append hook failed after its commit", error: String((e as Error)?.stack ?? e) }));
      }
    }
  }

  discard(): void {
    this.written.length = 0;
    this.texts.clear();
    this.notes.clear();
    this.storage.clear();
    this.journal.length = 0;
  }

  invalidate(): void {
    this.rows.clear();
  }
}
