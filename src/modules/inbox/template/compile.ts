import { ValidationFailed, type FieldProblem } from "../../../http/errors";
import { charLength, hasLoneSurrogate } from "../../../lib/text";
import { parseTemplate, TemplateSyntaxError, type Template } from "./parse";
import { renderTemplate } from "./render";

/** A stream's `inbox_template` holds at most this many characters. */
export const MAX_TEMPLATE_CHARS = 2000;

/** Parsed templates by their text: the inbox's job renders the same few templates again and again. */
const cache = new Map<string, Template | TemplateSyntaxError>();
const CACHE_SIZE = 500;

export function compiled(source: string): Template | TemplateSyntaxError {
  const hit = cache.get(source);
  if (hit) return hit;
  let result: Template | TemplateSyntaxError;
  try {
    result = parseTemplate(source);
  } catch (e) {
    if (!(e instanceof TemplateSyntaxError)) throw e;
    result = e;
  }
  // Oldest first out: a Map iterates in insertion order.
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(source, result);
  return result;
}

/** A refused template: the field, and for a syntax error the character it starts at. */
export interface TemplateProblem extends FieldProblem {
  position?: number;
}

/** What is wrong with a template, named as `field`; null when it may be saved. */
export function templateProblem(source: string, field: string): TemplateProblem | null {
  if (charLength(source) > MAX_TEMPLATE_CHARS) return { field, code: "too_long", message: `must be at most ${MAX_TEMPLATE_CHARS} characters` };
  // PostgreSQL's text cannot hold U+0000: refused on SQLite too, so the two databases answer alike.
  if (hasLoneSurrogate(source) || source.includes("\u0000")) return { field, code: "invalid", message: "must be valid Unicode without the NUL character" };
  const t = compiled(source);
  if (t instanceof TemplateSyntaxError) return { field, code: "template_syntax", message: t.message, position: t.position };
  return null;
}

export function assertTemplate(source: string, field: string): void {
  const problem = templateProblem(source, field);
  if (problem) throw new ValidationFailed([problem]);
}

/** The template's text for this payload root; "" for a template that does not parse (never saved). */
export function render(source: string, root: unknown): string {
  const t = compiled(source);
  return t instanceof TemplateSyntaxError ? "" : renderTemplate(t, root);
}
