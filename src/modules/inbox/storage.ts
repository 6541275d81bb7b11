import type { Deps } from "../../deps";

/**
 * Raw inbox bodies are kept for replay, on the workspace's disk, so they count as its storage
 * from the moment they are stored until their rows go: pruned, or deleted with their note.
 * The row holds the body, so `length(body)` is always what was counted for it.
 */
export function inboxBodyBytes(deps: Deps, noteId: string): number {
  return deps.db.$client
    .query<{ bytes: number }, [string]>("SELECT coalesce(sum(length(body)), 0) AS bytes FROM inbox_deliveries WHERE note_id = ?")
    .get(noteId)!.bytes;
}
