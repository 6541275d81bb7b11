export function byteLength(s: string): number {
  // Buffer.byteLength counts UTF-8 bytes without allocating the encoded copy.
  return Buffer.byteLength(s, "utf8");
}

/** Titles, folder names: control characters (CR, LF, NUL, …) are stripped on save. */
export function stripControl(s: string): string {
  return s.replace(/\p{Cc}/gu, "");
}

/** Number of characters as a person counts them (code points, not UTF-16 units). */
export function charLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Control characters (\p{Cc}: U+0000-U+001F, U+007F-U+009F) other than LF and TAB. */
const NEEDS_CLEANING = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/**
 * Appended text: CRLF becomes LF, other control characters except LF and TAB are removed,
 * and a final LF is added when missing. No timestamp is added.
 */
export function normaliseAppendText(text: string): string {
  // Most lines have no control character but LF or TAB: one test, no rewriting.
  let s = NEEDS_CLEANING.test(text) ? text.replace(/\r\n/g, "\n").replace(/[\p{Cc}]/gu, (c) => (c === "\n" || c === "\t" ? c : "")) : text;
  if (s.length > 0 && !s.endsWith("\n")) s += "\n";
  return s;
}

// Any surrogate code unit: only then can one be alone (a non-Unicode class is the cheaper scan).
const SURROGATE = /[\ud800-\udfff]/;

/** Lone surrogates cannot be stored as UTF-8 without being changed, so they are refused. */
export function hasLoneSurrogate(s: string): boolean {
  return SURROGATE.test(s) && /\p{Cs}/u.test(s);
}

export const TITLE_MAX_CHARS = 200;
export const FOLDER_NAME_MAX_CHARS = 80;

/** Why a title (already stripped of control characters) is refused, or null. */
export function titleProblem(title: string): string | null {
  return charLength(title) > TITLE_MAX_CHARS ? `title must be at most ${TITLE_MAX_CHARS} characters` : null;
}

const NEEDS_ESCAPE = /["\\\u0000-\u001f\u007f-\uffff]/;

/** `JSON.stringify(s)` for a string: the same text, without the call when nothing needs escaping (log lines). */
export function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}
