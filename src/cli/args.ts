import { parseArgs } from "node:util";

export class UsageError extends Error {}

type Options = Record<string, { type: "string" | "boolean" }>;
type Values<T extends Options> = { [K in keyof T]?: T[K]["type"] extends "string" ? string : boolean };

/** Parses --flags and positional words of one sub-command; unknown flags and missing values are usage errors. */
export function words<const T extends Options>(argv: string[], options: T, allowPositionals = true) {
  try {
    const parsed = parseArgs({ args: argv, options, strict: true, allowPositionals });
    return { values: parsed.values as Values<T>, positionals: parsed.positionals };
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/^TypeError \[\w+\]: /, ""));
  }
}

/** Parses --flags of one sub-command; unknown flags and missing values are usage errors. */
export function flags<const T extends Options>(argv: string[], options: T, required: (keyof T & string)[] = []): Values<T> {
  const { values } = words(argv, options, false);
  for (const name of required) {
    if (values[name] === undefined || values[name] === "") throw new UsageError(`--${name} is required`);
  }
  return values;
}
