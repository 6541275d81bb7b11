/**
 * Server-rendered HTML with escaping by default: `html\`<p>${name}</p>\`` escapes `name`;
 * only a value made by `html` itself (or `raw`, for trusted strings) goes in as markup.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Part = Html | string | number | boolean | null | undefined | Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false || part === true) return "";
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return part.map(render).join("");
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < parts.length; i++) out += render(parts[i]) + strings[i + 1]!;
  return new Html(out);
}

/** Markup that is already safe (sanitised rich-text HTML, constant SVG). */
export function raw(trusted: string): Html {
  return new Html(trusted);
}

export function page(body: Html, status = 200, headers: Record<string, string> = {}): Response {
  return new Response("<!doctype html>\n" + body.value, {
    status,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...headers },
  });
}
