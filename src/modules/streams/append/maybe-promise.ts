/** A value now, or later: what a step returns when only its uncommon case waits for the database. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * `f(v)` at once when `v` is at hand, after it when it is a promise. The append path is written
 * with it so that its common case (a cached stream, nothing but the batch's memory to touch) runs
 * without a promise or a pause: a promise and a microtask turn for each step of an append add up
 * to a measurable share of its time
 * (docs/PERFORMANCE.md, "Where the time goes: bare against ours").
 */
export function then<T, R>(v: MaybePromise<T>, f: (t: T) => MaybePromise<R>): MaybePromise<R> {
  return v instanceof Promise ? v.then(f) : f(v);
}
