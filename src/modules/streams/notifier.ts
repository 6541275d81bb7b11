/**
 * Who is waiting for new lines of which stream: the followers (SSE) register a wake-up per note,
 * and each batch of appends wakes those of the notes it wrote once its transaction has committed
 * (followersOnAppend in follow.ts). With nobody following, a batch costs one `size` and nothing else.
 */
export class LineNotifier {
  private waiting = new Map<string, Set<() => void>>();

  /** How many notes are followed. */
  get size(): number {
    return this.waiting.size;
  }

  has(noteId: string): boolean {
    return this.waiting.has(noteId);
  }

  /** Calls `wake` after every commit that wrote lines to the note, until the returned function is called. */
  watch(noteId: string, wake: () => void): () => void {
    let set = this.waiting.get(noteId);
    if (!set) this.waiting.set(noteId, (set = new Set()));
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0 && this.waiting.get(noteId) === set) this.waiting.delete(noteId);
    };
  }

  /** Wakes the followers of these notes; a follower's own failure never reaches the writer. */
  wake(noteIds: Iterable<string>): void {
    for (const id of noteIds) for (const wake of this.waiting.get(id) ?? []) call(wake);
  }

  wakeAll(): void {
    for (const set of this.waiting.values()) for (const wake of set) call(wake);
  }
}

function call(wake: () => void): void {
  try {
    wake();
  } catch (e) {
    console.error(JSON.stringify({ level: "error", msg: "a stream follower failed to wake", error: String((e as Error)?.stack ?? e) }));
  }
}
