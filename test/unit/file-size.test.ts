// A file in src/ that outgrows two screens is split where its parts meet (STYLE.md). The rule, as
// checked here: at most 300 lines, unless one of its first 5 lines is a comment that says why it
// is longer and uses the word "lines" (e.g. "// Over 300 lines on purpose: one table of …").
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const SRC = resolve(import.meta.dir, "../../src");
const MAX_LINES = 300;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith(".ts") ? [path] : [];
  });
}

/** A comment among the first 5 lines that gives the reason, in the words the rule asks for. */
const saysWhy = (head: string[]) => head.some((l) => /^\s*(\/\/|\/\*|\*)/.test(l) && /\blines\b/i.test(l));

test(`no file in src/ is over ${MAX_LINES} lines without a reason in its first lines`, () => {
  const over = sourceFiles(SRC).flatMap((file) => {
    const lines = readFileSync(file, "utf8").split("\n");
    const count = lines.at(-1) === "" ? lines.length - 1 : lines.length;
    return count > MAX_LINES && !saysWhy(lines.slice(0, 5)) ? [`${relative(SRC, file)}: ${count} lines`] : [];
  });
  expect(over).toEqual([]);
});
