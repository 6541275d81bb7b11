import { html } from "../../web/html";
import type { BadgeJson } from "./model";

/** The colors of shields.io's names, for the badge drawn here. */
const HEX: Record<string, string> = { brightgreen: "#4c1", orange: "#fe7d37", red: "#e05d44", lightgrey: "#9f9f9f", blue: "#007ec6" };

/** Verdana at 11 px averages about 7 px a character: wide enough without measuring fonts. */
const textWidth = (s: string) => [...s].length * 7 + 10;

/**
 * A flat two-part badge as shields.io draws it: the label on grey, the message on its color. Every
 * text goes through `html`, which escapes it, so a filename holding `<`, `&` or quotes stays text;
 * nothing in it runs.
 */
export function badgeSvg(b: BadgeJson): string {
  const lw = textWidth(b.label);
  const mw = textWidth(b.message);
  const w = lw + mw;
  const title = `${b.label}: ${b.message}`;
  return html`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" role="img" aria-label="${title}"><title>${title}</title><linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient><clipPath id="r"><rect width="${w}" height="20" rx="3" fill="#fff"/></clipPath><g clip-path="url(#r)"><rect width="${lw}" height="20" fill="#555"/><rect x="${lw}" width="${mw}" height="20" fill="${HEX[b.color] ?? "#9f9f9f"}"/><rect width="${w}" height="20" fill="url(#s)"/></g><g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11"><text x="${lw / 2}" y="14">${b.label}</text><text x="${lw + mw / 2}" y="14">${b.message}</text></g></svg>`.toString();
}
