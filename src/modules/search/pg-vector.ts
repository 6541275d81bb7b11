/**
 * A chunk's search vector on PostgreSQL, built here for the search indexer's pass (indexer.ts)
 * instead of by PostgreSQL. PostgreSQL's way (notestream_search_text()'s lower case and regular
 * expression, then the text search parser and two dictionaries) is a large share of its CPU for
 * log lines; reading the same vector as a literal costs a small part of that (docs/PERFORMANCE.md,
 * "Search, and PDFs").
 *
 * The result is exactly PostgreSQL's `to_tsvector('notestream_search',
 * notestream_search_text(text))` (test/integration/search.test.ts compares them on thousands of
 * texts, and checks every stored vector against PostgreSQL's). For ASCII:
 * - notestream_search_text keeps letters and digits, small, and makes everything else a space;
 *   unaccent leaves ASCII as it is, and 'simple' keeps every word;
 * - the parser's one split inside a run of letters and digits: a run that starts with digits,
 *   `e` and digits is a number in scientific notation, which ends at the next letter (`1e5abc`
 *   is `1e5` and `abc`);
 * - a word of more than 2,046 bytes (MAX_WORD) is left out, taking no position; positions stop
 *   at 16,383 (later words all get that one) and a word keeps its first 255.
 * Beyond ASCII it knows the separators log lines hold (SEPARATORS) and the Latin letters of
 * European languages (LATIN). Any other letter or digit (Greek, Cyrillic, CJK, ², the rarer Latin
 * letters) is left to PostgreSQL: `null`, and the pass has PostgreSQL's to_tsvector compute it.
 * So is every text of a database that tokenizes otherwise (writerVectorsAgree, asked once, at
 * the first pass).
 */
import type { SQL } from "bun";

/** The characters of a text that notestream_search_text() keeps (the rest is not indexed). */
const INDEXED_CHARS = 200_000;
/**
 * PostgreSQL's longest word, in bytes (MAXSTRLEN - 1): to_tsvector leaves out a word of 2,047
 * bytes or more (with a notice), and a tsvector literal holding one is refused ("word is too
 * long"), which would fail the pass's whole statement. Counted before unaccent, as PostgreSQL's
 * parser does: `é` counts two bytes though it is stored as `e`.
 */
const MAX_WORD = 2046;
/** PostgreSQL's last position (MAXENTRYPOS - 1): later words share it. */
const MAX_POSITION = 16_383;
/** The positions PostgreSQL keeps of one word. */
const MAX_POSITIONS = 255;
const WORDS = /[0-9]+e[0-9]+(?=[a-z])|[a-z0-9]+/g;

/**
 * Characters beyond ASCII that notestream_search_text() makes spaces and log lines hold: Latin-1's
 * punctuation and signs (no-break space, «», ×, ÷), general punctuation (dashes, quotes, …, zero
 * width joiner), arrows, mathematical and technical signs, box drawing, dingbats (✓ ✗), the
 * ideographic space and marks, variation selectors and emoji. Every one is in the class of
 * migrations-pg/0002 (a test checks them code point by code point); any other character beyond
 * ASCII leaves the vector to PostgreSQL.
 */
const SEPARATORS = String.raw`\u00A0-\u00A9\u00AB-\u00B1\u00B4\u00B6-\u00B8\u00BB\u00BF\u00D7\u00F7\u2000-\u206F\u2190-\u245F\u2500-\u2775\u2794-\u2BFF\u3000-\u3004\uFE00-\uFE0F\u{1F10D}-\u{1FAFF}`;
const BEYOND_ASCII = /[^\x00-\x7f]/u;
const BEYOND_ASCII_ALL = /[^\x00-\x7f]/gu;
const NOT_SEPARATOR = new RegExp(`[^\\x00-\\x7f${SEPARATORS}]`, "u");

/**
 * Latin letters beyond ASCII, which European languages write: Latin-1's (À–ÿ) and Latin
 * Extended-A's (Ā–ſ: ł, œ, ı, ő…). PostgreSQL makes them small (ICU), then unaccent takes their
 * marks off (é → e) or spells them in ASCII (ß → ss, æ → ae, ł → l): here toLowerCase, the
 * canonical decomposition without its marks, and SPELLED for the letters that do not decompose
 * (a test checks every one of them against PostgreSQL). ŉ, which unaccent spells with an
 * apostrophe, is left to PostgreSQL.
 */
const LATIN = String.raw`\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u0148\u014A-\u017F`;
const SPELLED: Record<string, string> = { æ: "ae", ð: "d", ø: "o", þ: "th", ß: "ss", đ: "d", ħ: "h", ı: "i", ĳ: "ij", ĸ: "q", ŀ: "l", ł: "l", ŋ: "n", œ: "oe", ŧ: "t", ſ: "s" };
const NOT_KNOWN = new RegExp(`[^\\x00-\\x7f${SEPARATORS}${LATIN}]`, "u");
const SEPARATORS_ALL = new RegExp(`[${SEPARATORS}]`, "gu");
const LATIN_WORDS = new RegExp(`[0-9]+e[0-9]+(?=[a-z${LATIN}])|[a-z0-9${LATIN}]+`, "gu");
const MARKS = /\p{M}/gu;

/** Whether `c` (one code point) is one of SEPARATORS. */
export function isKnownSeparator(c: string): boolean {
  return BEYOND_ASCII.test(c) && !NOT_SEPARATOR.test(c);
}

/** The Latin letters handled here (LATIN), one string each. */
export function latinLetters(): string[] {
  return Array.from({ length: 0x17f - 0xbf }, (_, i) => String.fromCodePoint(0xc0 + i)).filter((c) => !NOT_KNOWN.test(c) && NOT_SEPARATOR.test(c));
}

/** Words with Latin letters seen lately, as unaccent leaves them: a stream repeats its words. */
const unaccentedWords = new Map<string, string>();

/** A word with Latin letters as unaccent leaves it (small already). */
function unaccented(word: string): string {
  let bare = unaccentedWords.get(word);
  if (bare === undefined) {
    bare = word.normalize("NFD").replace(MARKS, "");
    if (BEYOND_ASCII.test(bare)) bare = bare.replace(BEYOND_ASCII_ALL, (c) => SPELLED[c] ?? c);
    if (unaccentedWords.size >= 10_000) unaccentedWords.clear();
    unaccentedWords.set(word, bare);
  }
  return bare;
}

/** The tsvector literal of a text's words, or null when PostgreSQL must compute it (see above). */
export function chunkSearchVector(text: string): string | null {
  let t = text;
  let latin = false;
  if (BEYOND_ASCII.test(t)) {
    // PostgreSQL indexes the first 200,000 code points; a text that long beyond ASCII is rare enough to leave to it.
    if (t.length > INDEXED_CHARS || NOT_KNOWN.test(t)) return null;
    t = t.replace(SEPARATORS_ALL, " ");
    latin = BEYOND_ASCII.test(t);
    // As PostgreSQL does before its lower case: İ's small form is two characters.
    if (latin) t = t.replaceAll("İ", "I");
  } else if (t.length > INDEXED_CHARS) {
    t = t.slice(0, INDEXED_CHARS);
  }
  const positions = new Map<string, number[]>();
  let position = 0;
  for (let word of t.toLowerCase().match(latin ? LATIN_WORDS : WORDS) ?? []) {
    if (latin && BEYOND_ASCII.test(word)) {
      // PostgreSQL's limit is in bytes: each of these letters is two in UTF-8.
      if (word.length > MAX_WORD / 2 && word.length + word.replace(/[\x00-\x7f]/g, "").length > MAX_WORD) continue;
      word = unaccented(word);
    } else if (word.length > MAX_WORD) {
      continue;
    }
    if (position < MAX_POSITION) position++;
    const list = positions.get(word);
    if (!list) positions.set(word, [position]);
    else if (list.length < MAX_POSITIONS && list[list.length - 1] !== position) list.push(position);
  }
  let literal = "";
  for (const [word, list] of positions) literal += `${literal ? " " : ""}'${word}':${list.join(",")}`;
  return literal;
}

/** A text that holds every rule above, upper case and every Latin letter included. */
function probe(): string {
  const words = latinLetters().map((c) => `x${c}${c.toUpperCase()}`).join(" ");
  return `INFO Warn user=Bob I 1e5abc 12e5e5 2e5é 4f2a1c took 12ms ✓ → … «x» 🎉👍🏽 İSTANBUL ${words} ${"x".repeat(2046)} ${"y".repeat(2047)} ${"é".repeat(1023)} ${"ß".repeat(1023)}z ${"w ".repeat(300)}end`;
}

/**
 * Whether this database makes of a text what chunkSearchVector does. One whose lower case or
 * parser differs (no ICU and a Turkish locale, where `I` is not `i`; a PostgreSQL whose parser
 * changed) gets no vectors from here: PostgreSQL computes them all, so search finds what the
 * database's own queries look for.
 */
export async function writerVectorsAgree(sql: SQL): Promise<boolean> {
  const text = probe();
  try {
    const [row] = await sql.unsafe<{ same: boolean }[]>(
      `SELECT $1::tsvector = to_tsvector('notestream_search', notestream_search_text($2)) AS same`,
      [chunkSearchVector(text), text],
    );
    return row?.same === true;
  } catch (e) {
    // A database that refuses the literal (a limit: 54xxx; its syntax: 42xxx, 22xxx) gets no vectors from here, and still indexes.
    if (/^(22|42|54)/.test(String((e as { errno?: unknown } | null)?.errno))) return false;
    throw e;
  }
}
