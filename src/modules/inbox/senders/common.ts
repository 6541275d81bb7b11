/** Small readers shared by the senders' summaries: they never throw on a missing or odd field. */

/** The stored line's length limit, here so the senders can size their lists to it. */
export const MAX_LINE_CHARS = 1000;

export type Json = Record<string, any>;

export const firstLine = (s: unknown) => (typeof s === "string" ? s.split("\n")[0]!.trim() : "");
export const str = (v: unknown) => (typeof v === "string" || typeof v === "number" ? String(v) : "");
export const join = (...parts: unknown[]) => parts.map(str).filter(Boolean).join(" ");
export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
