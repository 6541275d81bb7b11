import { ValidationFailed } from "../../http/errors";
import { hasLoneSurrogate, charLength } from "../../lib/text";
import { regexProblem, type Rule, type RuleAction } from "./matcher";

export const MAX_RULES = 20;
export const MAX_MATCH_CHARS = 200;
const ACTIONS: readonly RuleAction[] = ["fail", "ok", "alert"];

export type RuleInput = { match: string; regex?: boolean; case_sensitive?: boolean; then: string };
type RulesInput = { rules?: RuleInput[] | null };

/** A stream's rules as the row keeps them (JSON), [] for none. */
export function rulesOf(n: { rules: string | null }): Rule[] {
  return n.rules === null ? [] : (JSON.parse(n.rules) as Rule[]);
}

/** The rules part of a PATCH: null or [] removes them; each rule checked, a regex compiled once here. */
export function rulesChanges(note: { kind: string }, input: RulesInput): { rules?: string | null } {
  if (input.rules === undefined) return {};
  if (note.kind !== "stream") throw ValidationFailed.field("note.rules", "not_a_stream", "rules belong to streams (append-only notes)");
  return { rules: checkedRules(input.rules ?? []) };
}

function checkedRules(input: RuleInput[]): string | null {
  if (input.length > MAX_RULES) throw ValidationFailed.field("note.rules", "too_many", `a stream has at most ${MAX_RULES} rules`);
  const rules = input.map((r, i) => checkedRule(r, `note.rules[${i}]`));
  return rules.length === 0 ? null : JSON.stringify(rules);
}

// The types are checked here as well as by the body's schema: the settings page calls the service directly.
function checkedRule(r: RuleInput, at: string): Rule {
  const match = r.match;
  if (typeof match !== "string" || match.length === 0 || charLength(match) > MAX_MATCH_CHARS) {
    throw ValidationFailed.field(`${at}.match`, "out_of_range", `match must be 1 to ${MAX_MATCH_CHARS} characters`);
  }
  // PostgreSQL's text cannot hold U+0000, and a lone surrogate is no character: refused on both databases.
  if (hasLoneSurrogate(match) || match.includes("\u0000")) throw ValidationFailed.field(`${at}.match`, "invalid", "match must be valid Unicode without NUL");
  if (!(ACTIONS as readonly string[]).includes(r.then)) throw ValidationFailed.field(`${at}.then`, "invalid", "then must be fail, ok or alert");
  for (const flag of ["regex", "case_sensitive"] as const) {
    if (r[flag] !== undefined && typeof r[flag] !== "boolean") throw ValidationFailed.field(`${at}.${flag}`, "invalid_type", `${flag} must be true or false`);
  }
  const rule: Rule = { match, regex: r.regex ?? false, case_sensitive: r.case_sensitive ?? false, then: r.then as RuleAction };
  const problem = rule.regex ? regexProblem(match) : null;
  if (problem !== null) throw ValidationFailed.field(`${at}.match`, "invalid_regex", problem);
  return rule;
}
