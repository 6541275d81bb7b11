import { Document, HeadingLevel, Packer, Paragraph } from "docx";
import type * as fontkit from "fontkit";
import { PDFDocument, type PDFFont, type PDFPage } from "pdf-lib";
import { bytesOf, DocumentFonts, FACES, fontkitForPdfLib } from "./pdf-fonts";
import { clean, FaceChain, layParagraph, runsOf, wrap } from "./pdf-layout";

/** A rich note as DOCX: the title as a heading, then its text, a paragraph per line. */
export async function renderDocx(title: string, text: string): Promise<Uint8Array> {
  const doc = new Document({
    creator: "notestream",
    title,
    sections: [{ children: [new Paragraph({ text: title, heading: HeadingLevel.HEADING_1 }), ...text.split("\n").map((line) => new Paragraph({ text: line }))] }],
  });
  return new Uint8Array(await Packer.toBuffer(doc));
}

const PAGE = { width: 595, height: 842, margin: 56 };
const BODY = { size: 11, lead: 15 };
const HEADING = { size: 16, lead: 24 };

/**
 * A rich note as PDF: the title as a heading, then its text, wrapped to the page, pages added as
 * needed. Each character is drawn in the first face of FACES that has it (Latin, Greek and
 * Cyrillic in Noto Sans; Hebrew; Arabic; CJK; Hangul), embedded as subsets, so the text renders
 * and copies back out as written; a character no face has prints as U+FFFD. Right-to-left
 * paragraphs are laid out by the Unicode bidirectional algorithm and aligned right; Arabic is
 * shaped by the font's own rules.
 */
export async function renderPdf(title: string, text: string): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.registerFontkit(fontkitForPdfLib);
  pdf.setTitle(title);
  pdf.setCreator("notestream");
  const heading = clean(title.replace(/[\r\n]+/g, " "));
  const paragraphs = text.replace(/\r\n?/g, "\n").replace(/\n$/, "").split("\n").map(clean);
  const fonts = new DocumentFonts();
  const writer = new PageWriter(pdf);
  await writer.paragraph(await FaceChain.for(fonts, FACES.bold, [heading]), heading, HEADING);
  const body = await FaceChain.for(fonts, FACES.regular, paragraphs);
  for (const paragraph of paragraphs) await writer.paragraph(body, paragraph, BODY);
  return pdf.save();
}

// pdf-lib leaves glyph positions aside (it draws at advance widths), so the shaper need not
// compute them: the positioning features are off, substitutions (Arabic forms) stay on.
const UNPOSITIONED = { kern: false, mark: false, mkmk: false, curs: false, dist: false, abvm: false, blwm: false };

/** Draws paragraphs line by line, adding pages as they fill, embedding each face on first use. */
class PageWriter {
  private page: PDFPage | null = null;
  private y = 0;
  private readonly embedded = new Map<fontkit.Font, Promise<PDFFont>>();
  constructor(private readonly pdf: PDFDocument) {}

  private fontFor(chain: FaceChain, face: number): Promise<PDFFont> {
    const font = chain.fonts[face]!;
    let p = this.embedded.get(font);
    if (!p) {
      p = this.pdf.embedFont(bytesOf(font), { subset: true, features: UNPOSITIONED });
      this.embedded.set(font, p);
    }
    return p;
  }

  private nextLine(): PDFPage {
    if (!this.page || this.y < PAGE.margin) {
      this.page = this.pdf.addPage([PAGE.width, PAGE.height]);
      this.y = PAGE.height - PAGE.margin;
    }
    return this.page;
  }

  async paragraph(chain: FaceChain, paragraph: string, style: { size: number; lead: number }): Promise<void> {
    const laid = layParagraph(chain, paragraph, style.size);
    const max = PAGE.width - 2 * PAGE.margin;
    for (const [start, end] of wrap(laid, max)) {
      const page = this.nextLine();
      const runs = runsOf(laid, start, end);
      const placed: { font: PDFFont; text: string; width: number }[] = [];
      let total = 0;
      for (const run of runs) {
        const font = await this.fontFor(chain, run.face);
        const width = font.widthOfTextAtSize(run.text, style.size);
        placed.push({ font, text: run.text, width });
        total += width;
      }
      let x = laid.rtl ? PAGE.width - PAGE.margin - Math.min(total, max) : PAGE.margin;
      for (const p of placed) {
        page.drawText(p.text, { x, y: this.y, size: style.size, font: p.font });
        x += p.width;
      }
      this.y -= style.lead;
    }
  }
}
