import { describe, expect, test } from "bun:test";
import type { NotesBackend } from "../../src/mcp/backend";
import { MAX_SUBSCRIPTIONS, StreamSubscriptions } from "../../src/mcp/subscriptions";

/** A backend whose follows are counted: open ones, and who was told of a change. */
function countingBackend() {
  const open = new Map<string, () => void>();
  const backend = {
    follow: async (by: { filename?: string; id?: string }, changed: () => void) => {
      const key = by.filename ?? by.id!;
      open.set(key, changed);
      return () => open.delete(key);
    },
  } as unknown as NotesBackend;
  return { backend, open };
}

describe("a connection's stream subscriptions", () => {
  test("subscribing twice is one follow; unsubscribing ends it; a change notifies the address subscribed", async () => {
    const told: string[] = [];
    const subs = new StreamSubscriptions((uri) => told.push(uri));
    const { backend, open } = countingBackend();
    await subs.subscribe(backend, "notestream://streams/a%20b.log");
    await subs.subscribe(backend, "notestream://streams/a%20b.log");
    expect([...open.keys()]).toEqual(["a b.log"]);
    open.get("a b.log")!();
    expect(told).toEqual(["notestream://streams/a%20b.log"]);
    subs.unsubscribe("notestream://streams/a%20b.log");
    expect(open.size).toBe(0);
  });

  test("an address that is not a notestream resource, or one past the cap, is refused", async () => {
    const subs = new StreamSubscriptions(() => {});
    const { backend, open } = countingBackend();
    await expect(subs.subscribe(backend, "file:///etc/passwd")).rejects.toThrow("validation_failed");
    for (let i = 0; i < MAX_SUBSCRIPTIONS; i++) await subs.subscribe(backend, `notestream://streams/s${i}.log`);
    await expect(subs.subscribe(backend, "notestream://streams/one-more.log")).rejects.toThrow("rate_limited");
    subs.close();
    expect(open.size).toBe(0);
  });
});
