/**
 * Laying out a note's text for a PDF: which face draws each character, where lines break (spaces,
 * between CJK characters, inside a word only when it is wider than the line), and the order in
 * which a line's runs are drawn when it holds right-to-left text (the Unicode bidirectional
 * algorithm: bidi-js resolves the levels, rule L2 reorders each line).
 */
import bidiFactory from "bidi-js";
import type * as fontkit from "fontkit";
import { type DocumentFonts, type Face, SHAPED_SCRIPT } from "./pdf-fonts";

const REPLACEMENT = 0xfffd;
const TAB = "    ";

/** Tabs as spaces, NFC (so accents come precomposed where Unicode has the letter), no control characters. */
export function clean(text: string): string {
  return text.normalize("NFC").replace(/\t/g, TAB).replace(/\p{Cc}/gu, "");
}

// What the layout needs to know of a character, as bits.
const SPACE = 1; // a line may break after it, and drops it there
const WIDE = 2; // CJK: a line may break before or after it
const NO_BREAK_BEFORE = 4; // closing punctuation and small kana stay with what precedes them
const NO_BREAK_AFTER = 8; // opening punctuation stays with what follows
const SHARED = 16; // marks, spaces, digits, punctuation: fine in the face of what precedes them
const INVISIBLE = 32; // format characters and combining marks (variation selectors too): left out when no face has them

const BREAKING_SPACE = /^[ \u1680\u2000-\u2006\u2008-\u200a\u205f\u3000]$/u;
const WIDE_RE = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff00-\uffef]$/u;
const CLOSING = new Set("、。，．！？：；）」』】〕〉》〟’”｝］…‥ー々ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ・");
const OPENING = new Set("（「『【〔〈《〝‘“｛［");
const SHARED_RE = /^[\p{Script=Common}\p{Script=Inherited}]$/u;
const INVISIBLE_RE = /^[\p{Cf}\p{Mn}]$/u;
const RTL_HINT = /[\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\u200f\u202b\u202e\u2067\u061c]/u;

function classify(ch: string): number {
  return (
    (BREAKING_SPACE.test(ch) ? SPACE : 0) |
    (WIDE_RE.test(ch) ? WIDE : 0) |
    (CLOSING.has(ch) ? NO_BREAK_BEFORE : 0) |
    (OPENING.has(ch) ? NO_BREAK_AFTER : 0) |
    (SHARED_RE.test(ch) ? SHARED : 0) |
    (INVISIBLE_RE.test(ch) ? INVISIBLE : 0)
  );
}

/** The faces tried for each character, the choice per code point, and what is known of each. */
export class FaceChain {
  readonly fonts: fontkit.Font[] = [];
  private readonly choice = new Map<number, number>();
  private readonly advance = new Map<number, number>();
  private readonly classes = new Map<number, number>();
  private constructor(readonly faces: Face[]) {}

  /** Reads the faces the texts need, in chain order, stopping when every character has one. */
  static async for(fonts: DocumentFonts, faces: Face[], texts: string[]): Promise<FaceChain> {
    const chain = new FaceChain(faces);
    const pending = new Set<number>([REPLACEMENT]);
    for (const t of texts) for (const ch of t) pending.add(ch.codePointAt(0)!);
    for (let i = 0; i < faces.length && pending.size; i++) {
      const font = (chain.fonts[i] = await fonts.load(faces[i]!));
      for (const cp of pending) {
        if (!font.hasGlyphForCodePoint(cp)) continue;
        chain.choice.set(cp, i);
        pending.delete(cp);
      }
    }
    return chain;
  }

  /** The face index for a code point, -1 when no face has it. */
  faceOf(cp: number): number {
    return this.choice.get(cp) ?? -1;
  }

  has(face: number, cp: number): boolean {
    return this.fonts[face]?.hasGlyphForCodePoint(cp) ?? false;
  }

  classOf(ch: string, cp: number): number {
    let c = this.classes.get(cp);
    if (c === undefined) this.classes.set(cp, (c = classify(ch)));
    return c;
  }

  /** Advance of a code point in a face, in ems (before kerning and shaping). */
  width(face: number, cp: number): number {
    const key = cp * 8 + face;
    let w = this.advance.get(key);
    if (w === undefined) {
      const font = this.fonts[face]!;
      w = font.glyphForCodePoint(cp).advanceWidth / font.unitsPerEm;
      this.advance.set(key, w);
    }
    return w;
  }
}

let bidi: ReturnType<typeof bidiFactory> | undefined;

/** One paragraph as drawn: each character with its face and width, and bidi levels when it has right-to-left text. */
export interface Laid {
  chars: string[];
  faces: number[];
  widths: number[];
  classes: number[];
  levels: number[] | null;
  rtl: boolean;
}

export function layParagraph(chain: FaceChain, paragraph: string, size: number): Laid {
  const chars: string[] = [];
  const faces: number[] = [];
  const widths: number[] = [];
  const classes: number[] = [];
  for (const ch of paragraph) {
    let cp = ch.codePointAt(0)!;
    let cls = chain.classOf(ch, cp);
    const prev = faces.length ? faces[faces.length - 1]! : -1;
    // Marks, spaces, digits and punctuation stay in the face of what precedes them when it has
    // them: a mark sits on its letter, and a right-to-left line drawn as one run is one text
    // item, which PDF readers put back in logical order when the text is copied.
    let face = cls & SHARED && prev >= 0 && chain.has(prev, cp) ? prev : chain.faceOf(cp);
    let c = ch;
    if (face < 0) {
      if (cls & INVISIBLE) continue;
      cp = REPLACEMENT;
      c = "\ufffd";
      cls = chain.classOf(c, cp);
      face = chain.faceOf(cp);
      if (face < 0) continue;
    }
    chars.push(c);
    faces.push(face);
    widths.push(chain.width(face, cp) * size);
    classes.push(cls);
  }
  let levels: number[] | null = null;
  let rtl = false;
  const joined = chars.join("");
  if (RTL_HINT.test(joined)) {
    bidi ??= bidiFactory();
    const result = bidi.getEmbeddingLevels(joined, "auto");
    levels = new Array(chars.length);
    for (let i = 0, unit = 0; i < chars.length; unit += chars[i]!.length, i++) levels[i] = result.levels[unit]!;
    rtl = (result.paragraphs[0]?.level ?? 0) % 2 === 1;
  }
  return { chars, faces, widths, classes, levels, rtl };
}

function canBreakBefore(classes: number[], i: number): boolean {
  const cur = classes[i]!;
  const prev = classes[i - 1]!;
  if (cur & SPACE) return false;
  if (prev & SPACE) return true;
  return (prev & WIDE || cur & WIDE) !== 0 && !(cur & NO_BREAK_BEFORE) && !(prev & NO_BREAK_AFTER);
}

/**
 * Greedy line breaking: at spaces, between CJK characters, and inside a word only when the word
 * alone is wider than the line. Returns [start, end) of each line, without the spaces at a break.
 */
export function wrap(laid: Laid, max: number): [number, number][] {
  const { classes, widths } = laid;
  const n = widths.length;
  const lines: [number, number][] = [];
  const trimEnd = (start: number, end: number) => {
    while (end > start && classes[end - 1]! & SPACE) end--;
    return end;
  };
  let start = 0;
  let width = 0;
  let lastBreak = -1;
  for (let i = 0; i < n; i++) {
    if (i > start && canBreakBefore(classes, i)) lastBreak = i;
    if (!(classes[i]! & SPACE) && i > start && width + widths[i]! > max) {
      const end = lastBreak > start ? lastBreak : i;
      lines.push([start, trimEnd(start, end)]);
      start = end;
      while (start < i && classes[start]! & SPACE) start++;
      width = 0;
      for (let k = start; k < i; k++) width += widths[k]!;
      lastBreak = -1;
      if (i > start && width + widths[i]! > max) {
        lines.push([start, trimEnd(start, i)]);
        start = i;
        width = 0;
      }
    }
    width += widths[i]!;
  }
  lines.push([start, trimEnd(start, n)]);
  return lines;
}

/** The visual order of a line's characters (rule L2 of the bidirectional algorithm). */
function visualOrder(levels: number[], start: number, end: number): number[] {
  const order: number[] = [];
  let max = 0;
  let minOdd = Infinity;
  for (let i = start; i < end; i++) {
    order.push(i);
    const l = levels[i]!;
    if (l > max) max = l;
    if (l % 2 === 1 && l < minOdd) minOdd = l;
  }
  for (let level = max; level >= minOdd; level--) {
    for (let k = 0; k < order.length; ) {
      if (levels[order[k]!]! < level) {
        k++;
        continue;
      }
      let e = k;
      while (e < order.length && levels[order[e]!]! >= level) e++;
      const run = order.slice(k, e).reverse();
      order.splice(k, e - k, ...run);
      k = e;
    }
  }
  return order;
}

export interface Run {
  face: number;
  text: string;
}

/** A line as runs in drawing order (left to right), each in one face and at one bidi level. */
export function runsOf(laid: Laid, start: number, end: number): Run[] {
  const { chars, faces, levels } = laid;
  const runs: Run[] = [];
  if (!levels) {
    for (let i = start; i < end; ) {
      let j = i + 1;
      while (j < end && faces[j] === faces[i]) j++;
      runs.push({ face: faces[i]!, text: chars.slice(i, j).join("") });
      i = j;
    }
    return runs;
  }
  const order = visualOrder(levels, start, end);
  for (let k = 0; k < order.length; ) {
    const first = order[k]!;
    let e = k + 1;
    while (e < order.length && faces[order[e]!] === faces[first] && levels[order[e]!] === levels[first]) e++;
    const visual = order.slice(k, e).map((i) => chars[i]!);
    // fontkit reverses a run whose script is right-to-left (after shaping it in logical order):
    // such a run goes in reversed, whatever its level (Arabic-Indic digits are left-to-right).
    const reversedByFontkit = SHAPED_SCRIPT.test(visual.join(""));
    const rtlRun = levels[first]! % 2 === 1;
    const text = reversedByFontkit
      ? visual.reverse().join("")
      : rtlRun
        ? visual.map((c) => bidi!.getMirroredCharacter(c) ?? c).join("")
        : visual.join("");
    runs.push({ face: faces[first]!, text });
    k = e;
  }
  return runs;
}
