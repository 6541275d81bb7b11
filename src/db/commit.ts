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
  const reply = (body: T): Reply<T> => {
    const r = { status: typeof status === "function" ? status(body) : status, body };
    if (ctx.idempotency) ctx.idempotency.store(r.status, JSON.stringify(body));
    return r;
  };
  // A synchronous write (an append) stays synchronous: the writer runs a batch of those without a pause.
  return ctx.deps.writer.write(() => {
    const body = run();
    return body instanceof Promise ? body.then(reply) : reply(body);
  }, opts);
}
