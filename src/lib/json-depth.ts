/**
 * How deep a JSON body may nest, everywhere a body is parsed: far beyond any real request, far
 * below what a recursive walk (validation, stringify, summarising) can take.
 */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \
const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }

/**
 * Whether `text`, read as JSON, nests arrays and objects more than `max` levels deep. One pass
 * over the characters with no allocation, stopping at the first level past `max`, so it is safe
 * to run on hostile input before JSON.parse (whose result, or anything that walks it
 * recursively, can overflow the stack on a deep enough value). Brackets inside strings do not
 * count; a backslash in a string escapes the next character, so `"\\"` ends where it should.
 * Malformed JSON gets an answer too; JSON.parse still decides whether it is JSON.
 */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0, n = text.length; i < n; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}
