import { expect, test } from "bun:test";
import { compiledRules, RULE_TEXT_CHARS, verdictOf } from "../../src/modules/rules/matcher";

const rules = (match: string, regex = false) => compiledRules(JSON.stringify([{ match, regex, case_sensitive: true, then: "fail" }]));
const failed = { signal: "fail" as const, alert: undefined };

test("rules try the lines that end within an append's first 65,536 characters, whole", () => {
  expect(verdictOf(rules("ERROR"), "fine\n".repeat(100) + "ERROR\n")).toEqual(failed);
  expect(verdictOf(rules("ERROR"), "x".repeat(RULE_TEXT_CHARS - 6) + "ERROR\n")).toEqual(failed);
  expect(verdictOf(rules("ERROR"), "fine\n".repeat(RULE_TEXT_CHARS / 5) + "ERROR\n")).toBeUndefined();
  // A 3 MB line is not tried: twenty regex rules on it would hold the event loop for seconds.
  expect(verdictOf(rules("ERROR"), "ERROR " + "x".repeat(3_000_000) + "\n")).toBeUndefined();
  // A line is never cut, so an anchored pattern sees its real end.
  expect(verdictOf(rules("(a+)+$", true), "a".repeat(50_000) + "b\n")).toBeUndefined();
});

test("a case-insensitive regex on the lowercased line matches exactly what RE2's own case folding matches", async () => {
  const { RE2JS } = await import("re2js");
  const { foldedPattern } = await import("../../src/modules/rules/matcher");
  const pieces = ["Error", "TIMEOUT", "a", "B", "\\d+", "\\D", "\\w", "\\W", "\\s", "\\S", "\\b", ".", "[A-F]", "[^a-z]", "[xYz]", "[0-9A-Z_]", "(ok|FAIL)", "x?", "Q*", "(?:", ")", "^", "$", " ", "-", "é", "\\.", "[:]", "z{2,3}"];
  const lines = ["ERROR: Timeout after 42 ms", "error b", "ok FAIL Ab", "Q", "zzZ", "Ünïcödé É é", "_-[]^`", "a1B2c3", "x.y", "", "TimeOut", "[:upper:] Z"];
  let seed = 7;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
  let compared = 0;
  for (let i = 0; i < 3000; i++) {
    const pattern = Array.from({ length: 1 + rand(5) }, () => pieces[rand(pieces.length)]).join("");
    let folding: InstanceType<typeof RE2JS>;
    try {
      folding = RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE);
    } catch {
      continue;
    }
    const folded = foldedPattern(pattern);
    if (folded === null) continue;
    const lowered = RE2JS.compile(folded);
    for (const line of lines) expect([pattern, line, lowered.test(line.toLowerCase())]).toEqual([pattern, line, folding.test(line)]);
    compared++;
  }
  expect(compared).toBeGreaterThan(1000);
  // What could read differently keeps RE2's own folding.
  for (const p of ["[A-z]", "\\p{Lu}", "\\x41", "(?i)a", "(?P<Name>x)", "[[:upper:]]", "É", "\\Qa.b\\E", "\\C"]) expect(foldedPattern(p)).toBeNull();
  expect(foldedPattern("Timeout AFTER \\d+ ?MS [A-F\\W]")).toBe("timeout after \\d+ ?ms [a-f\\W]");
});
