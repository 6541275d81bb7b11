/** Time enters through this interface so tests can move it (snapshot debounce, expiry). */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

let lastMs = -1;
let lastIso = "";

export function iso(ms: number): string;
export function iso(ms: number | null): string | null;
export function iso(ms: number | null): string | null {
  if (ms === null) return null;
  // Under load many answers share a millisecond: format it once.
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

export const DAY_MS = 24 * 60 * 60 * 1000;
