/**
 * A chunk's search vector on PostgreSQL, built here for ASCII text instead of by PostgreSQL inside
 * the append's transaction. PostgreSQL's way (notestream_search_text()'s lower case and regular
 * expression, then the text search parser and two dictionaries) costs about 0.5 ms of its CPU for
 * a batch of 25 log lines, a third of its work per batch; reading the same vector as a literal
 * costs a seventh of that (docs/PERFORMANCE.md "Search vectors from the app").
 *
 * For ASCII the result is exactly PostgreSQL's `to_tsvector('notestream_search',
 * notestream_search_text(text))` (test/integration/search.test.ts compares them on thousands of
 * texts, and checks every stored vector against PostgreSQL's):
 * - notestream_search_text keeps letters and digits, small, and makes everything else a space;
 *   unaccent leaves ASCII as it is, and 'simple' keeps every word;
 * - the parser's one split inside a run of letters and digits: a run that starts with digits,
 *   `e` and digits is a number in scientific notation, which ends at the next letter (`1e5abc`
 *   is `1e5` and `abc`);
 * - a word longer than 2,047 characters is left out, taking no position; positions stop at
 *   16,383 (later words all get that one) and a word keeps its first 255.
 * Anything else (a letter with an accent, another script, an emoji) is left to PostgreSQL:
 * `null`, and the trigger of migrations-pg/0006 computes the vector as before.
 */

/** The characters of a text that notestream_search_text() keeps (the rest is not indexed). */
const INDEXED_CHARS = 200_000;
/** PostgreSQL's longest indexed word (longer ones are ignored, with a notice). */
const MAX_WORD = 2047;
/** PostgreSQL's last position (MAXENTRYPOS - 1): later words share it. */
const MAX_POSITION = 16_383;
/** The positions PostgreSQL keeps of one word. */
const MAX_POSITIONS = 255;
const WORDS = /[0-9]+e[0-9]+(?=[a-z])|[a-z0-9]+/g;

/** The tsvector literal of an ASCII text's words, or null when the text holds anything else. */
export function asciiSearchVector(text: string): string | null {
  const t = text.length > INDEXED_CHARS ? text.slice(0, INDEXED_CHARS) : text;
  for (let i = 0; i < t.length; i++) if (t.charCodeAt(i) > 0x7f) return null;
  const positions = new Map<string, number[]>();
  let position = 0;
  for (const word of t.toLowerCase().match(WORDS) ?? []) {
    if (word.length > MAX_WORD) continue;
    if (position < MAX_POSITION) position++;
    const list = positions.get(word);
    if (!list) positions.set(word, [position]);
    else if (list.length < MAX_POSITIONS && list[list.length - 1] !== position) list.push(position);
  }
  let literal = "";
  for (const [word, list] of positions) literal += `${literal ? " " : ""}'${word}':${list.join(",")}`;
  return literal;
}
