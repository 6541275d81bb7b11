import type { Ctx } from "../deps";
import type { Reply } from "./reply";

/**
 * Runs a write through the single writer. When the request carries an Idempotency-Key, its
 * answer is stored in the same transaction, so a write and its replay record commit together.
 */
export function commit<T>(
  ctx: Ctx,
  status: number | ((body: T) => number),
  run: () => T | Promise<T>,
  opts: { freesSpace?: boolean } = {},
): Promise<Reply<T>> {
  return ctx.deps.writer.write(async () => replyOf(ctx, status, await run()), opts);
}

/** A write's reply, stored first as the Idempotency-Key's answer when the request carries one. */
export function replyOf<T>(ctx: Ctx, status: number | ((body: T) => number), body: T): Reply<T> | Promise<Reply<T>> {
  const reply = { status: typeof status === "function" ? status(body) : status, body };
  return ctx.idempotency ? ctx.idempotency.store(reply.status, JSON.stringify(body)).then(() => reply) : reply;
}
