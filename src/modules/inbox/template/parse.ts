/**
 * The inbox template language, parsed by hand: text with `{{ path | filter arg … }}` placeholders.
 * A path is names and `[N]` indexes (`alerts[0].labels.alertname`), or `["any key"]`; filters take
 * at most one argument, a quoted string or a whole number. Nothing else is an expression: no
 * calls, no operators, no literals outside filter arguments, so nothing a template says can run.
 */

export type Step = { key: string } | { index: number };
export type FilterName = "default" | "upper" | "lower" | "join" | "count" | "truncate";
export interface Filter {
  name: FilterName;
  arg?: string | number;
}
export type Part = { text: string } | { path: Step[]; filters: Filter[] };
export type Template = Part[];

/** What each filter takes: a string, a whole number, or nothing. */
const FILTER_ARGS: Record<FilterName, "string" | "number" | "none"> = {
  default: "string",
  upper: "none",
  lower: "none",
  join: "string",
  count: "none",
  truncate: "number",
};
export const FILTER_NAMES = Object.keys(FILTER_ARGS) as FilterName[];

export class TemplateSyntaxError extends Error {
  /** 1-based, in characters (code points) of the template, as a person counts them. */
  readonly position: number;
  constructor(source: string, index: number, what: string) {
    const position = [...source.slice(0, index)].length + 1;
    super(`template syntax error at character ${position}: ${what}`);
    this.position = position;
  }
}

const NAME = /[\p{L}\p{N}_$-]/u;
const SPACE = /\s/;
/** Past this, `truncate N` is no limit at all: a line holds 1,000 characters. */
const MAX_NUMBER = 100_000;

/** Reads one placeholder's inside, from `start` to `end` (the index of its `}}`). */
class Reader {
  i: number;
  constructor(
    readonly src: string,
    start: number,
    readonly end: number,
  ) {
    this.i = start;
  }
  fail(what: string, at = this.i): never {
    throw new TemplateSyntaxError(this.src, at, what);
  }
  peek(): string | undefined {
    return this.i < this.end ? this.src[this.i] : undefined;
  }
  skipSpace(): void {
    while (this.i < this.end && SPACE.test(this.src[this.i]!)) this.i++;
  }
  /** What is at the cursor, for a message: a quoted character or "the end of the placeholder". */
  seen(): string {
    const c = this.peek();
    return c === undefined ? "the end of the placeholder" : `"${c}"`;
  }
  name(): string {
    const start = this.i;
    while (this.i < this.end && NAME.test(this.src[this.i]!)) this.i++;
    if (this.i === start) this.fail(`expected a name, found ${this.seen()}`);
    return this.src.slice(start, this.i);
  }
  number(): number {
    const start = this.i;
    while (this.i < this.end && /[0-9]/.test(this.src[this.i]!)) this.i++;
    if (this.i === start) this.fail(`expected a whole number, found ${this.seen()}`);
    const n = Number(this.src.slice(start, this.i));
    if (n > MAX_NUMBER) this.fail(`the number is over ${MAX_NUMBER}`, start);
    return n;
  }
  string(): string {
    const quote = this.peek();
    if (quote !== '"' && quote !== "'") this.fail(`expected a quoted string, found ${this.seen()}`);
    const start = this.i++;
    let out = "";
    while (this.i < this.end) {
      const c = this.src[this.i++]!;
      if (c === quote) return out;
      if (c === "\\" && this.i < this.end) out += this.src[this.i++];
      else out += c;
    }
    return this.fail("the string is not closed", start);
  }
}

function parsePath(r: Reader): Step[] {
  const path: Step[] = [];
  r.skipSpace();
  if (r.peek() !== "[") path.push({ key: r.name() });
  for (;;) {
    const c = r.peek();
    if (c === ".") {
      r.i++;
      path.push({ key: r.name() });
    } else if (c === "[") {
      r.i++;
      r.skipSpace();
      const q = r.peek();
      path.push(q === '"' || q === "'" ? { key: r.string() } : { index: r.number() });
      r.skipSpace();
      if (r.peek() !== "]") r.fail(`expected "]", found ${r.seen()}`);
      r.i++;
    } else {
      return path;
    }
  }
}

function parseFilter(r: Reader): Filter {
  r.skipSpace();
  const at = r.i;
  const name = r.name();
  if (!(name in FILTER_ARGS)) r.fail(`unknown filter "${name}" (the filters are ${FILTER_NAMES.join(", ")})`, at);
  const f = name as FilterName;
  const takes = FILTER_ARGS[f];
  r.skipSpace();
  if (takes === "none") return { name: f };
  if (r.peek() === "|" || r.peek() === undefined) r.fail(`the filter ${f} needs ${takes === "string" ? "a quoted string" : "a whole number"}`);
  if (takes === "string") return { name: f, arg: r.string() };
  const n = r.number();
  if (n < 1) r.fail(`the filter ${f} needs a number of at least 1`, r.i - 1);
  return { name: f, arg: n };
}

function parsePlaceholder(src: string, start: number, end: number): Part {
  const r = new Reader(src, start, end);
  r.skipSpace();
  if (r.peek() === undefined) r.fail("an empty placeholder");
  const path = parsePath(r);
  const filters: Filter[] = [];
  for (;;) {
    r.skipSpace();
    const c = r.peek();
    if (c === undefined) return { path, filters };
    if (c !== "|") r.fail(`unexpected ${r.seen()}; a placeholder holds a path, then | filters`);
    r.i++;
    filters.push(parseFilter(r));
  }
}

/** Where the placeholder opened at `open` ends: its `}}`, outside any quoted string. */
function closeOf(src: string, open: number): number {
  let quote: string | null = null;
  let quoteAt = 0;
  for (let i = open + 2; i < src.length; i++) {
    const c = src[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      quote = c;
      quoteAt = i;
    }
    else if (c === "}" && src[i + 1] === "}") return i;
    else if (c === "{" && src[i + 1] === "{") throw new TemplateSyntaxError(src, i, `"{{" inside a placeholder`);
  }
  if (quote) throw new TemplateSyntaxError(src, quoteAt, "the string is not closed");
  throw new TemplateSyntaxError(src, open, `"{{" is not closed by "}}"`);
}

/** The template's parts, or a TemplateSyntaxError naming the first mistake and where it is. */
export function parseTemplate(src: string): Template {
  const parts: Template = [];
  let i = 0;
  while (i < src.length) {
    const open = src.indexOf("{{", i);
    if (open === -1) {
      parts.push({ text: src.slice(i) });
      break;
    }
    if (open > i) parts.push({ text: src.slice(i, open) });
    const close = closeOf(src, open);
    parts.push(parsePlaceholder(src, open + 2, close));
    i = close + 2;
  }
  return parts;
}
