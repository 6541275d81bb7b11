/** A value now, or later: what a step returns when only its uncommon case waits for the database. */
export type Maybe<T> = T | Promise<T>;

/**
 * `f(v)` at once when `v` is at hand, after it when it is a promise. The append path is written
 * with it so that its common case (a cached stream, nothing but the batch's memory to touch) runs
 * without a promise or a pause, as it did when the database was only SQLite: a promise and a
 * microtask turn for each step of an append added up to a measurable share of its time
 * (docs/PERFORMANCE.md, "Where the time goes: bare against ours").
 */
export function then<T, R>(v: Maybe<T>, f: (t: T) => Maybe<R>): Maybe<R> {
  return v instanceof Promise ? v.then(f) : f(v);
}
