import { parseArgs } from "node:util";

export class UsageError extends Error {}

/** Parses --flags of one sub-command; unknown flags and missing values are usage errors. */
export function flags<const T extends Record<string, { type: "string" | "boolean" }>>(
  argv: string[],
  options: T,
  required: (keyof T & string)[] = [],
) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: false });
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/^TypeError \[\w+\]: /, ""));
  }
  const values = parsed.values as Record<string, unknown>;
  for (const name of required) {
    if (values[name] === undefined || values[name] === "") throw new UsageError(`--${name} is required`);
  }
  return parsed.values as { [K in keyof T]?: T[K]["type"] extends "string" ? string : boolean };
}
