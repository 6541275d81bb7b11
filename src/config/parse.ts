// What every reading of a NOTESTREAM_* variable shares: the error that stops the start, numbers and switches.

/** A variable that cannot be used: its message names the variable, what it must be and what it was. */
export class ConfigError extends Error {}

export function parseNumber(name: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n) || n < min || n > max) throw new ConfigError(`${name} must be a number from ${min} to ${max}, got "${raw}"`);
  return n;
}

export function parseWhole(name: string, raw: string, min: number, max: number): number {
  const n = parseNumber(name, raw, min, max);
  if (!Number.isInteger(n)) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return n;
}

export function parseBool(name: string, raw: string): boolean {
  const v = raw.toLowerCase();
  if (["1", "true", "yes", "on"].includes(v)) return true;
  if (["0", "false", "no", "off"].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}
