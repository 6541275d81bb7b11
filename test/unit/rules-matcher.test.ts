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
