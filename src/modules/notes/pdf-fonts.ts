import * as fontkit from "fontkit";
import type { PDFDocument } from "pdf-lib";
// The font files come from npm packages (SIL Open Font License 1.1, see FONTS-LICENSE.txt) and
// are embedded in the executable by `bun build --compile`. The packages' `exports` map offers
// no subpath to the files, hence the relative paths.
import notoSans from "../../../node_modules/@embedpdf/fonts-latin/fonts/NotoSans-Regular.ttf" with { type: "file" };
import notoSansBold from "../../../node_modules/@embedpdf/fonts-latin/fonts/NotoSans-Bold.ttf" with { type: "file" };
import notoHebrew from "../../../node_modules/@embedpdf/fonts-hebrew/fonts/NotoSansHebrew-Regular.ttf" with { type: "file" };
import notoHebrewBold from "../../../node_modules/@embedpdf/fonts-hebrew/fonts/NotoSansHebrew-Bold.ttf" with { type: "file" };
import notoArabic from "../../../node_modules/@embedpdf/fonts-arabic/fonts/NotoNaskhArabic-Regular.ttf" with { type: "file" };
import notoArabicBold from "../../../node_modules/@embedpdf/fonts-arabic/fonts/NotoNaskhArabic-Bold.ttf" with { type: "file" };
import notoHans from "../../../node_modules/@embedpdf/fonts-sc/fonts/NotoSansHans-Regular.otf" with { type: "file" };
import notoKorean from "../../../node_modules/@embedpdf/fonts-kr/fonts/NotoSansKR-Regular.otf" with { type: "file" };

/**
 * Right-to-left scripts: fontkit shapes them and reverses them into drawing order itself, so
 * runs in them go to the PDF in logical order (src/modules/notes/render.ts relies on this).
 */
export const SHAPED_SCRIPT = /[\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;

/** A font file; the bytes of `keep` faces stay in memory between documents. */
export interface Face {
  name: string;
  path: string;
  keep: boolean;
}

const face = (name: string, path: string, keep: boolean): Face => ({ name, path, keep });
// The CJK faces are 13 MB together and few notes need them: they are read per document.
const hans = face("Noto Sans Hans", notoHans, false);
const korean = face("Noto Sans KR", notoKorean, false);

/**
 * The faces tried in turn for each character: Noto Sans (Latin, Greek, Cyrillic), Hebrew, Arabic
 * (Naskh), then Noto Sans Hans (CJK ideographs, kana, CJK punctuation and full-width forms) and
 * Noto Sans KR (Hangul). A later face is read only when an earlier one lacks a character.
 */
export const FACES = {
  regular: [face("Noto Sans", notoSans, true), face("Noto Sans Hebrew", notoHebrew, true), face("Noto Naskh Arabic", notoArabic, true), hans, korean],
  bold: [face("Noto Sans Bold", notoSansBold, true), face("Noto Sans Hebrew Bold", notoHebrewBold, true), face("Noto Naskh Arabic Bold", notoArabicBold, true), hans, korean],
} satisfies Record<string, Face[]>;

const keptBytes = new Map<Face, Promise<Uint8Array>>();

function bytesOfFace(f: Face): Promise<Uint8Array> {
  const read = async () => new Uint8Array(await Bun.file(f.path).arrayBuffer());
  if (!f.keep) return read();
  let p = keptBytes.get(f);
  if (!p) {
    p = read();
    keptBytes.set(f, p);
    p.catch(() => keptBytes.delete(f));
  }
  return p;
}

const parsed = new WeakMap<Uint8Array, fontkit.Font>();
const sources = new WeakMap<fontkit.Font, Uint8Array>();

/**
 * The faces of one document, each parsed once for it. Parsed fonts are not shared between
 * documents: fontkit caches a glyph with the characters it was first met for, and writing a
 * subset meets composite glyphs' components with none (the "u" of "û"), so a later document
 * would map such a glyph to no character and it would not copy out of the PDF.
 */
export class DocumentFonts {
  private readonly fonts = new Map<Face, Promise<fontkit.Font>>();

  load(f: Face): Promise<fontkit.Font> {
    let p = this.fonts.get(f);
    if (!p) {
      p = bytesOfFace(f).then((shared) => {
        // A view of its own (no copy) keys this document's font, even while another document
        // renders with the same kept bytes.
        const bytes = new Uint8Array(shared.buffer, shared.byteOffset, shared.length);
        const font = fontkit.create(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)) as fontkit.Font;
        parsed.set(bytes, font);
        sources.set(font, bytes);
        return font;
      }, (err: Error) => {
        throw new Error(`the PDF font ${f.name} could not be read from ${f.path}: ${err.message}`);
      });
      this.fonts.set(f, p);
    }
    return p;
  }
}

/** The bytes a parsed face came from, for `PDFDocument.embedFont`. */
export function bytesOf(font: fontkit.Font): Uint8Array {
  return sources.get(font)!;
}

/**
 * pdf-lib embeds custom fonts through a "fontkit". Its own fork (@pdf-lib/fontkit 1.1) writes
 * broken subsets (short `loca` offsets in TrueType, a bad offset size in CFF): text extracts
 * fine but draws as blanks or wrong glyphs (poppler rejects the CFF fonts outright). Upstream fontkit 2 writes them
 * correctly; this adapter gives it the 1.x interface pdf-lib calls (`encodeStream`), and hands
 * back the font the document already parsed instead of parsing the bytes again.
 */
export const fontkitForPdfLib = {
  create(data: Uint8Array) {
    const font = parsed.get(data) ?? (fontkit.create(Buffer.from(data)) as fontkit.Font);
    const createSubset = () => {
      const subset = font.createSubset();
      return Object.assign(subset, { encodeStream: () => onceStream(() => subset.encode()) });
    };
    // pdf-lib draws the glyphs a layout returns at their advance widths, leaving its positions
    // (kerning, mark placement) aside: only scripts whose letters change shape (Arabic) or that
    // fontkit must reverse go through the shaper, the rest maps character to glyph, which is
    // several times faster on a long note.
    const layout = (text: string, features?: Record<string, boolean>) => {
      if (!SHAPED_SCRIPT.test(text)) return { glyphs: font.glyphsForString(text) };
      const run = font.layout(text, features);
      if (run.direction === "rtl") for (const g of run.glyphs) if (g.codePoints.length > 1) rtlLigature(g);
      return run;
    };
    // fontkit's properties are getters on the prototype: a proxy reads them through.
    return new Proxy(font, {
      get(target, key) {
        if (key === "createSubset") return createSubset;
        if (key === "layout") return layout;
        const v = Reflect.get(target, key, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  },
} as unknown as Parameters<PDFDocument["registerFontkit"]>[0];

const flipped = new WeakSet<fontkit.Glyph>();

/**
 * A right-to-left ligature (Arabic lam-alef) maps to its characters in reverse: readers copying
 * text out of a PDF reverse a right-to-left run character by character, the ligature's
 * characters included, and so give them back in logical order.
 */
function rtlLigature(g: fontkit.Glyph): void {
  if (flipped.has(g)) return;
  flipped.add(g);
  g.codePoints = [...g.codePoints].reverse();
}

/** The one-chunk event stream pdf-lib reads a subset from. */
function onceStream(encode: () => Uint8Array) {
  const handlers: Record<string, (arg?: unknown) => void> = {};
  const stream = {
    on(event: string, fn: (arg?: unknown) => void) {
      handlers[event] = fn;
      return stream;
    },
  };
  queueMicrotask(() => {
    let bytes: Uint8Array;
    try {
      bytes = encode();
    } catch (err) {
      handlers.error?.(err);
      return;
    }
    handlers.data?.(bytes);
    handlers.end?.();
  });
  return stream;
}
