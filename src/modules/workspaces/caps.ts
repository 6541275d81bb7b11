import type { Deps } from "../../deps";
import { CapExceeded } from "../../http/errors";
import { bodyCapFor, MB, noteCapFor, type Tier } from "../../limits/plans";
import { countNotes, type WorkspaceRow } from "./repo";

function sizeLabel(bytes: number): string {
  return `${+(bytes / MB).toFixed(2)} MB`;
}

/** Room for `adding` more notes of this format, counted the way the tier counts them. */
export async function assertNoteSlots(deps: Deps, ws: WorkspaceRow, tier: Tier, format: "plain" | "rich", adding = 1): Promise<void> {
  const cap = noteCapFor(tier, format);
  if (!cap) return;
  const used = await countNotes(deps, ws.id, cap.shared ? undefined : format);
  if (used + adding > cap.limit) {
    const which = cap.shared ? "notes" : `${format} notes`;
    throw new CapExceeded("notes", cap.limit, used, `the ${tier.name} plan allows ${cap.limit} ${which}; this workspace has ${used}`);
  }
}

/**
 * Room in the workspace's storage for `delta` more bytes (a shrinking write always fits).
 * `used`: the storage counted so far, when it is more than the row says (a batch's appends).
 */
export function assertStorage(ws: WorkspaceRow, tier: Tier, delta: number, used = ws.storageUsed): void {
  if (tier.storage === null || delta <= 0) return;
  if (used + delta > tier.storage) {
    throw new CapExceeded(
      "storage",
      tier.storage,
      used,
      `the ${tier.name} plan allows ${sizeLabel(tier.storage)} of storage; ${sizeLabel(used)} is used`,
    );
  }
}

export function assertNoteSize(tier: Tier, format: "plain" | "rich", newSize: number, currentSize: number): void {
  const cap = bodyCapFor(tier, format);
  if (cap === null || newSize <= cap || newSize <= currentSize) return;
  throw new CapExceeded(
    "note_size",
    cap,
    currentSize,
    `a ${format} note on the ${tier.name} plan may hold ${sizeLabel(cap)}; this write would make it ${newSize} bytes`,
  );
}
