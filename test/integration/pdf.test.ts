/**
 * PDF renderings of rich notes in any script: what a reader copies out of the PDF is what the
 * note says (through the download route and the account export), the text stays on the page, a
 * character no font has becomes a visible replacement, and the embedded font programs are whole
 * (text that extracts fine can still draw as blanks when a subset is broken).
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { unzipSync } from "fflate";
import * as fontkit from "fontkit";
import { decodePDFRawStream, PDFDict, PDFDocument, PDFName, PDFRawStream, PDFRef } from "pdf-lib";
import { extractText, getDocumentProxy } from "unpdf";
import { findAccountByEmail } from "../../src/modules/accounts/service";
import { renderPdf } from "../../src/modules/notes/render";
import { createRichNote } from "../../src/modules/notes/rich";
import { createSession, SESSION_COOKIE, webPrincipal } from "../../src/web/session";
import notoSansRegular from "../../node_modules/@embedpdf/fonts-latin/fonts/NotoSans-Regular.ttf" with { type: "file" };
import notoSansBold from "../../node_modules/@embedpdf/fonts-latin/fonts/NotoSans-Bold.ttf" with { type: "file" };
import { harness, type Harness } from "../helpers/harness";

let h: Harness;
beforeEach(async () => {
  h = await harness();
});
afterEach(() => h.close());

const TITLE = "Заметка · Σημείωση · 笔记";
const LINES = [
  "Crème brûlée, naïve façade, Ærøskøbing, Łódź, Þórsmörk.",
  "Съешь же ещё этих мягких французских булок, да выпей чаю.",
  "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία.",
  "日本語のテキストと、中文的文本。",
  "한국어 문장도 보입니다.",
  // No spaces to break at: it must wrap between characters rather than run off the page.
  "中文文本".repeat(40),
];

/** Text as the reader gets it, whitespace (where lines wrapped and items were joined) aside. */
const squash = (s: string) => s.replace(/\s+/g, "");

async function pdfText(bytes: Uint8Array): Promise<string> {
  const { text } = await extractText(await getDocumentProxy(bytes.slice()), { mergePages: true });
  return text;
}

/** Every text item's horizontal extent, to check that nothing is drawn past the page's edge. */
async function itemExtents(bytes: Uint8Array): Promise<{ str: string; left: number; right: number; pageWidth: number }[]> {
  const doc = await getDocumentProxy(bytes.slice());
  const out: { str: string; left: number; right: number; pageWidth: number }[] = [];
  for (let p = 1; p <= doc.numPages; p++) {
    const page = await doc.getPage(p);
    const pageWidth = page.view[2]!;
    for (const item of (await page.getTextContent()).items) {
      if (!("str" in item) || !item.str.trim()) continue;
      out.push({ str: item.str, left: item.transform[4], right: item.transform[4] + item.width, pageWidth });
    }
  }
  return out;
}

async function richNote(a: { accountId: string; workspaceId: string }, title: string, lines: string[]) {
  const html = lines.map((l) => `<p>${l}</p>`).join("");
  const r = await createRichNote({ ctx: { deps: h.deps, principal: webPrincipal(a.accountId, a.workspaceId, Infinity) }, title, html });
  return (r.body as { id: string }).id;
}

async function expectWholeText(bytes: Uint8Array, title: string, lines: string[]) {
  expect(new TextDecoder().decode(bytes.slice(0, 5))).toBe("%PDF-");
  expect(squash(await pdfText(bytes))).toBe(squash(title + lines.join("")));
  for (const item of await itemExtents(bytes)) {
    expect(item.left).toBeGreaterThanOrEqual(0);
    expect(item.right).toBeLessThanOrEqual(item.pageWidth);
  }
}

describe("PDF of a rich note", () => {
  test("the download has the note's Latin, Cyrillic, Greek and CJK text, every character, on the page", async () => {
    const a = await h.account("dev");
    const id = await richNote(a, TITLE, LINES);
    const { secret } = await createSession(h.deps, (await findAccountByEmail(h.deps, a.email))!);
    const res = await h.request("GET", `/notes/${id}/download/pdf`, { headers: { cookie: `${SESSION_COOKIE}=${secret}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/pdf");
    const bytes = new Uint8Array(await res.arrayBuffer());
    await expectWholeText(bytes, TITLE, LINES);
    // The fonts go in as subsets: a CJK font whole would be megabytes.
    expect(bytes.length).toBeLessThan(400_000);
  });

  test("the account export's rendering has them too", async () => {
    const a = await h.account("dev");
    const token = await h.token(a, ["read", "write"]);
    await richNote(a, TITLE, LINES);
    const { id } = await (await h.request("POST", "/api/v1/export", { token })).json();
    await h.jobs.drain();
    const status = await (await h.request("GET", `/api/v1/export/${id}`, { token })).json();
    const zip = unzipSync(new Uint8Array(await (await h.request("GET", new URL(status.download_url).pathname, { token })).arrayBuffer()));
    const name = Object.keys(zip).find((n) => n.endsWith(".pdf"))!;
    await expectWholeText(zip[name]!, TITLE, LINES);
  });

  test("Hebrew and Arabic lines read back in their order (ligatures too), right-aligned", async () => {
    // "السلام" draws lam and alef as one ligature glyph.
    const lines = ["שלום עולם", "مرحبا بالعالم، السلام عليكم", "Build 42 passed"];
    const bytes = await renderPdf("RTL", lines.join("\n"));
    const text = await pdfText(bytes);
    for (const line of lines) expect(text).toContain(line);
    const items = await itemExtents(bytes);
    const right = (s: string) => Math.max(...items.filter((i) => s.includes(i.str.trim())).map((i) => i.right));
    const left = (s: string) => Math.min(...items.filter((i) => s.includes(i.str.trim())).map((i) => i.left));
    // Right-to-left paragraphs end at the right margin; the Latin one starts at the left margin.
    expect(right(lines[0]!)).toBeGreaterThan(500);
    expect(right(lines[1]!)).toBeGreaterThan(500);
    expect(left(lines[2]!)).toBeLessThan(100);
  });

  test("a character no font has becomes a visible replacement, and odd input does not break it", async () => {
    const text = "Smile 😀 here\ttab\u0000nul \uD800 lone\r\nnext ᚠᛇᚻ";
    const bytes = await renderPdf("Odd 😀", text);
    const out = await pdfText(bytes);
    expect(squash(out)).toBe(squash("Odd \uFFFD" + "Smile \uFFFD here tab nul \uFFFD lone next \uFFFD\uFFFD\uFFFD"));
  });

  test("a long note wraps and runs over pages", async () => {
    const para = "Съешь же ещё этих мягких французских булок. 日本語のテキスト。".repeat(20);
    const bytes = await renderPdf("Long", Array.from({ length: 40 }, () => para).join("\n"));
    const doc = await PDFDocument.load(bytes);
    expect(doc.getPageCount()).toBeGreaterThan(5);
    expect(squash(await pdfText(bytes))).toBe(squash("Long" + para.repeat(40)));
  });

  test("the embedded font programs are whole: each glyph draws the outline of the character it stands for", async () => {
    const bytes = await renderPdf("Ωμέγα Жж Ğğ", "Crème brûlée — Съешь ещё. Ξεσκεπάζω. 日本語と中文。 한국어");
    const doc = await PDFDocument.load(bytes);
    const sources: Record<string, fontkit.Font> = {
      "NotoSans-Regular": fontkit.create(Buffer.from(await Bun.file(notoSansRegular).arrayBuffer())) as fontkit.Font,
      "NotoSans-Bold": fontkit.create(Buffer.from(await Bun.file(notoSansBold).arrayBuffer())) as fontkit.Font,
    };
    const seen = { trueType: 0, cff: 0, glyphs: 0 };
    for (const [, obj] of doc.context.enumerateIndirectObjects()) {
      if (!(obj instanceof PDFDict) || obj.get(PDFName.of("Subtype"))?.toString() !== "/Type0") continue;
      const base = obj.get(PDFName.of("BaseFont"))!.toString().replace(/^\/(\w{6}\+)?/, "");
      const cid = doc.context.lookup((doc.context.lookup(obj.get(PDFName.of("DescendantFonts"))) as unknown as { get(i: number): PDFRef }).get(0)) as PDFDict;
      const descriptor = doc.context.lookup(cid.get(PDFName.of("FontDescriptor"))) as PDFDict;
      const trueType = descriptor.get(PDFName.of("FontFile2"));
      const program = decodePDFRawStream(doc.context.lookup(trueType ?? descriptor.get(PDFName.of("FontFile3"))) as PDFRawStream).decode();
      if (!trueType) {
        // A bare CFF program: header 1.0, 4 bytes long, offsets of 1 to 4 bytes.
        expect([...program.slice(0, 4)].slice(0, 3)).toEqual([1, 0, 4]);
        expect(program[3]).toBeGreaterThanOrEqual(1);
        expect(program[3]).toBeLessThanOrEqual(4);
        seen.cff++;
        continue;
      }
      seen.trueType++;
      const subset = fontkit.create(Buffer.from(program)) as fontkit.Font;
      const source = Object.entries(sources).find(([name]) => base.startsWith(name))?.[1];
      if (!source) continue;
      const toUnicode = new TextDecoder().decode(decodePDFRawStream(doc.context.lookup(obj.get(PDFName.of("ToUnicode"))) as PDFRawStream).decode());
      for (const [, gid, uni] of toUnicode.matchAll(/<([0-9a-f]{4})> <([0-9a-f]{4})>/gi)) {
        const cp = parseInt(uni!, 16);
        if (/\s/.test(String.fromCodePoint(cp))) continue;
        const drawn = subset.getGlyph(parseInt(gid!, 16)).path.toSVG();
        expect(drawn.length).toBeGreaterThan(0);
        expect(drawn).toBe(source.glyphForCodePoint(cp).path.toSVG());
        seen.glyphs++;
      }
    }
    expect(seen.trueType).toBeGreaterThanOrEqual(2);
    expect(seen.cff).toBeGreaterThanOrEqual(2);
    expect(seen.glyphs).toBeGreaterThan(20);
  });
});
