import { RE2JS } from "re2js";

export type RuleAction = "fail" | "ok" | "alert";

/** A rule as a stream keeps it (the notes row's `rules`, JSON) and the API shows it. */
export interface Rule {
  match: string;
  regex: boolean;
  case_sensitive: boolean;
  then: RuleAction;
}

/**
 * One rule ready to try on a line. Regexes run on RE2JS (a port of RE2: automata, no
 * backtracking), so a pattern such as `(a+)+$` takes time linear in the line, where JavaScript's
 * own RegExp could take exponential time and hold the event loop. A substring compares without a
 * regex; ignoring case, against the line lowercased once.
 */
type Test = { kind: "same"; match: string } | { kind: "lower"; match: string } | { kind: "regex"; re: RE2JS } | { kind: "lower-regex"; re: RE2JS };

interface CompiledRules {
  rules: readonly Rule[];
  tests: readonly Test[];
}

/** What a stream's rules made of one append's lines: the last fail or ok, and the first line an alert rule took. */
export interface Verdict {
  signal: "ok" | "fail" | undefined;
  alert: { line: string; rule: Rule } | undefined;
}

function compileRegex(r: Pick<Rule, "match" | "case_sensitive">): RE2JS {
  return RE2JS.compile(r.match, r.case_sensitive ? 0 : RE2JS.CASE_INSENSITIVE);
}

/**
 * A case-insensitive pattern made to match the lowercased line case-sensitively, or null when
 * that would change what it matches. RE2JS folds case on every character it reads, which takes
 * about seven times as long as a case-sensitive run on a log line (1.9 µs against 0.26): a tenth
 * of an append's time for one rule. So the pattern's ASCII letters are lowercased, outside
 * escapes (`\D` must stay `\D`), and the line is lowercased once for all rules. Whatever could
 * read differently falls back to RE2's own folding: a non-ASCII letter, a hex or Unicode-class
 * escape, a flag or named group, a POSIX class, or a class range from a capital to a non-capital
 * (`[A-z]` holds `[\]^_\``).
 */
export function foldedPattern(pattern: string): string | null {
  let out = "";
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\") {
      const next = pattern[i + 1] ?? "";
      if (/[pPQExC0-9]/.test(next)) return null;
      out += c + next;
      i++;
      continue;
    }
    if (c.charCodeAt(0) > 127 && c.toLowerCase() !== c.toUpperCase()) return null;
    if (!inClass && c === "(" && pattern[i + 1] === "?") return null;
    if (c === "[") {
      if (inClass && pattern[i + 1] === ":") return null;
      inClass = true;
    } else if (c === "]" && inClass && !/\[\^?$/.test(pattern.slice(0, i))) inClass = false;
    if (inClass && pattern[i + 1] === "-" && pattern[i + 2] !== undefined && pattern[i + 2] !== "]") {
      const [from, to] = [c, pattern[i + 2]!];
      if (/[A-Z]/.test(from) !== /[A-Z]/.test(to)) return null;
    }
    out += /[A-Z]/.test(c) ? c.toLowerCase() : c;
  }
  return out;
}

function testOf(r: Rule): Test {
  if (r.regex) {
    const folded = r.case_sensitive ? null : foldedPattern(r.match);
    return folded === null ? { kind: "regex", re: compileRegex(r) } : { kind: "lower-regex", re: RE2JS.compile(folded) };
  }
  return r.case_sensitive ? { kind: "same", match: r.match } : { kind: "lower", match: r.match.toLowerCase() };
}

/** Why RE2 refuses this pattern (its own message, which quotes the pattern as written), or null when it compiles. */
export function regexProblem(pattern: string): string | null {
  try {
    // Without the case flag, which RE2JS writes into the pattern its messages quote.
    RE2JS.compile(pattern);
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

// Streams with rules are few and their rules change rarely: each distinct rules text is parsed and
// compiled once, and an append only looks its stream's up. Bounded, oldest out first.
const compiled = new Map<string, CompiledRules>();
const CACHE_SIZE = 1000;

/** A stream's rules (the row's JSON text), compiled once and kept. */
export function compiledRules(json: string): CompiledRules {
  let c = compiled.get(json);
  if (c) return c;
  const rules = JSON.parse(json) as Rule[];
  c = { rules, tests: rules.map(testOf) };
  if (compiled.size >= CACHE_SIZE) compiled.delete(compiled.keys().next().value!);
  compiled.set(json, c);
  return c;
}

/** The index of the first rule that matches the line, or -1. */
function firstMatch(c: CompiledRules, line: string): number {
  let lower: string | undefined;
  for (let i = 0; i < c.tests.length; i++) {
    const t = c.tests[i]!;
    const hit =
      t.kind === "same" ? line.includes(t.match) : t.kind === "lower" ? (lower ??= line.toLowerCase()).includes(t.match) : t.kind === "lower-regex" ? t.re.test((lower ??= line.toLowerCase())) : t.re.test(line);
    if (hit) return i;
  }
  return -1;
}

/**
 * What rules read, so that a rule costs an append little whatever its pattern and the append's
 * size: linear time is still time (RE2JS takes 5 to 80 ms a megabyte per regex), and twenty regex
 * rules on a 3 MB line would hold the event loop for seconds. Rules try the lines that end within
 * an append's first 65,536 characters, whole (a line is never cut, so `$` means its end).
 */
export const RULE_TEXT_CHARS = 65_536;

/**
 * Tries the rules on each line of an append's text (each ends with a newline) in order: the first
 * rule that matches a line acts. The last line's fail or ok decides the signal; of alerts, the
 * first line's only (one alert per append). Undefined when no rule matched.
 */
export function verdictOf(c: CompiledRules, text: string): Verdict | undefined {
  let verdict: Verdict | undefined;
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    if (end > RULE_TEXT_CHARS) break;
    const line = text.slice(start, end);
    start = end + 1;
    const i = firstMatch(c, line);
    if (i < 0) continue;
    verdict ??= { signal: undefined, alert: undefined };
    const rule = c.rules[i]!;
    if (rule.then !== "alert") verdict.signal = rule.then;
    else verdict.alert ??= { line, rule };
  }
  return verdict;
}
