import type { Ctx } from "../deps";

/** A write's answer: the HTTP status a route sends and the body. */
export interface Reply<T> {
  status: number;
  body: T;
}

/**
 * Runs a write through the single writer. When the request carries an Idempotency-Key, its
 * answer is stored in the same transaction, so a write and its replay record commit together.
 */
export function commit<T>(
  ctx: Ctx,
  status: number | ((body: T) => number),
  run: () => T | Promise<T>,
  opts: { coalesce?: boolean } = {},
): Promise<Reply<T>> {
  return ctx.deps.writer.write(async () => {
    const body = await run();
    const reply = { status: typeof status === "function" ? status(body) : status, body };
    if (ctx.idempotency) await ctx.idempotency.store(reply.status, JSON.stringify(body));
    return reply;
  }, opts);
}
