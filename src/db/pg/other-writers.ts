import type { SQL } from "bun";
import type { OtherWriters } from "../other-writers";

/** The channel every instance listens on; the payload is the sender's id, so an instance skips its own. */
export const CHANGES_CHANNEL = "notestream_changes";

/**
 * PostgreSQL's: LISTEN on one channel. Another instance's announcement moves the version; so does
 * every (re)subscription, since what was sent while the connection was down is lost.
 */
export async function pgOtherWriters(pool: SQL, afterCommit: (fn: () => void) => void): Promise<OtherWriters & { id: string; stop(): Promise<void> }> {
  const me = crypto.randomUUID();
  let version = 0;
  const listeners: (() => void)[] = [];
  const changed = () => {
    version++;
    for (const fn of listeners) fn();
  };
  const subscription = await pool.listen(
    CHANGES_CHANNEL,
    (from) => {
      if (from !== me) changed();
    },
    changed,
  );
  return {
    id: me,
    version: () => version,
    onChange: (fn) => listeners.push(fn),
    announce: () => afterCommit(() => void pool.notify(CHANGES_CHANNEL, me).catch(() => {})),
    stop: () => subscription.unlisten(),
  };
}
