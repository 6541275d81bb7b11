import { Document, HeadingLevel, Packer, Paragraph } from "docx";
import { PDFDocument, StandardFonts } from "pdf-lib";

/** A rich note as DOCX: the title as a heading, then its text, a paragraph per line. */
export async function renderDocx(title: string, text: string): Promise<Uint8Array> {
  const doc = new Document({
    creator: "notestream",
    title,
    sections: [{ children: [new Paragraph({ text: title, heading: HeadingLevel.HEADING_1 }), ...text.split("\n").map((line) => new Paragraph({ text: line }))] }],
  });
  return new Uint8Array(await Packer.toBuffer(doc));
}

/**
 * A rich note as PDF, in Helvetica: text wrapped to the page, pages added as needed. The
 * standard PDF fonts cover Western European text; other characters print as "?".
 */
export async function renderPdf(title: string, text: string): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.setTitle(title);
  pdf.setCreator("notestream");
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const encodable = (s: string) => [...s].map((c) => (isEncodable(font, c) ? c : "?")).join("");
  const [width, height, margin, size, lead] = [595, 842, 56, 11, 15];
  let pageRef = pdf.addPage([width, height]);
  let y = height - margin;
  const line = (t: string, f = font, s = size) => {
    if (y < margin) {
      pageRef = pdf.addPage([width, height]);
      y = height - margin;
    }
    pageRef.drawText(t, { x: margin, y, size: s, font: f });
    y -= s === size ? lead : s + 8;
  };
  line(encodable(title), bold, 16);
  for (const paragraph of text.split("\n")) {
    const words = encodable(paragraph).split(" ");
    let current = "";
    for (const w of words) {
      const next = current ? `${current} ${w}` : w;
      if (font.widthOfTextAtSize(next, size) > width - 2 * margin && current) {
        line(current);
        current = w;
      } else current = next;
    }
    line(current);
  }
  return pdf.save();
}

function isEncodable(font: { encodeText: (s: string) => unknown }, c: string): boolean {
  try {
    font.encodeText(c);
    return true;
  } catch {
    return false;
  }
}
