import type { Ctx } from "../deps";
import { then, type Maybe } from "../lib/maybe";
import type { Reply } from "./reply";

/**
 * Runs a write through the single writer. When the request carries an Idempotency-Key, its
 * answer is stored in the same transaction, so a write and its replay record commit together.
 */
export function commit<T>(
  ctx: Ctx,
  status: number | ((body: T) => number),
  run: () => T | Promise<T>,
  opts: { coalesce?: boolean; freesSpace?: boolean } = {},
): Promise<Reply<T>> {
  // A write that needs no database round trip (most appends) stays synchronous (lib/maybe.ts).
  return ctx.deps.writer.write(
    () =>
      then(run(), (body): Maybe<Reply<T>> => {
        const reply = { status: typeof status === "function" ? status(body) : status, body };
        return ctx.idempotency ? ctx.idempotency.store(reply.status, JSON.stringify(body)).then(() => reply) : reply;
      }),
    opts,
  );
}
