import { byteLength } from "./text";

export const FILENAME_MAX_BYTES = 200;

// Control (Cc), format/invisible (Cf: zero-width, bidi), line/paragraph separators,
// lone surrogates, and the blank "filler" letters that render as nothing.
const FORBIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u115F\u1160\u3164\uFFA0]/u;

/** Why a stream filename is refused, or null when it is acceptable. */
export function filenameProblem(name: string): { code: string; message: string } | null {
  if (name.length === 0) return { code: "blank", message: "filename must not be empty" };
  if (byteLength(name) > FILENAME_MAX_BYTES) {
    return { code: "too_long", message: `filename must be at most ${FILENAME_MAX_BYTES} bytes of UTF-8` };
  }
  if (name.includes("/") || name.includes("\\")) {
    return { code: "invalid", message: "filename must not contain / or \\" };
  }
  // The runtime turns raw path bytes that are not UTF-8 into U+FFFD before the service sees them.
  if (name.includes("\uFFFD")) {
    return { code: "invalid", message: "filename must be valid UTF-8 (it holds U+FFFD, the mark of bytes that were not)" };
  }
  if (FORBIDDEN.test(name)) {
    return { code: "invalid", message: "filename must not contain control or invisible characters" };
  }
  if (/^\s|\s$/u.test(name)) {
    return { code: "invalid", message: "filename must not start or end with whitespace" };
  }
  return null;
}
