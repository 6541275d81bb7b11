/**
 * A strict parser of the Prometheus text exposition format 0.0.4, as Prometheus itself reads it
 * (https://prometheus.io/docs/instrumenting/exposition_formats/): every line a HELP, a TYPE, a
 * comment, a sample or empty; names and label names in their alphabets; label values quoted with
 * only \\, \" and \n escaped; values as Go's ParseFloat reads them (NaN, +Inf, -Inf, any case). Stricter
 * than a scraper where a scraper would only warn: a family's samples must be contiguous and
 * after its TYPE, no series twice, HELP and TYPE at most once each, and a histogram's buckets
 * cumulative, ending in le="+Inf" equal to its _count. Anything else throws, naming the line.
 */

export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string | null;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set<MetricType>(["counter", "gauge", "histogram", "summary", "untyped"]);
const SUFFIXES: Record<MetricType, string[]> = {
  counter: [""],
  gauge: [""],
  untyped: [""],
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["", "_sum", "_count"],
};

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const seenSeries = new Set<string>();
  const closed = new Set<string>();
  let current: Family | null = null;
  const lines = text.split("\n");
  if (lines[lines.length - 1] !== "") throw new Error("the exposition must end with a newline");
  lines.pop();

  const family = (name: string, lineNo: number): Family => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { name, type: "untyped", help: null, samples: [] }));
    if (current !== f) {
      if (closed.has(name)) throw new Error(`line ${lineNo}: ${name} appears again after another metric family`);
      if (current) closed.add(current.name);
      current = f;
    }
    return f;
  };

  lines.forEach((line, i) => {
    const lineNo = i + 1;
    if (line === "") return;
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!m) return; // an ordinary comment
      const [, kind, name, rest = ""] = m;
      if (!NAME.test(name!) || NAME.exec(name!)![0] !== name) throw new Error(`line ${lineNo}: bad metric name "${name}"`);
      const f = family(name!, lineNo);
      if (kind === "HELP") {
        if (f.help !== null) throw new Error(`line ${lineNo}: second HELP for ${name}`);
        f.help = unescapeHelp(rest, lineNo);
      } else {
        if (f.samples.length > 0) throw new Error(`line ${lineNo}: TYPE of ${name} after its samples`);
        if ((f as Family & { typed?: boolean }).typed) throw new Error(`line ${lineNo}: second TYPE for ${name}`);
        if (!TYPES.has(rest as MetricType)) throw new Error(`line ${lineNo}: unknown type "${rest}"`);
        f.type = rest as MetricType;
        (f as Family & { typed?: boolean }).typed = true;
      }
      return;
    }
    const sample = parseSample(line, lineNo);
    const owner = ownerOf(sample.name, families, current);
    const f = family(owner, lineNo);
    if (!SUFFIXES[f.type].some((s) => f.name + s === sample.name)) throw new Error(`line ${lineNo}: ${sample.name} does not belong to ${f.type} ${f.name}`);
    const key = `${sample.name}{${Object.entries(sample.labels).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(",")}}`;
    if (seenSeries.has(key)) throw new Error(`line ${lineNo}: series ${key} twice`);
    seenSeries.add(key);
    f.samples.push(sample);
  });

  for (const f of families.values()) if (f.type === "histogram") checkHistogram(f);
  return families;
}

/** The family a sample belongs to: the current one when its name fits, else its own name. */
function ownerOf(name: string, families: Map<string, Family>, current: Family | null): string {
  if (current && SUFFIXES[current.type].some((s) => current.name + s === name)) return current.name;
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    const base = name.slice(0, -suffix.length);
    if (name.endsWith(suffix) && ["histogram", "summary"].includes(families.get(base)?.type ?? "")) return base;
  }
  return name;
}

function parseSample(line: string, lineNo: number): Sample {
  const fail = (why: string): never => {
    throw new Error(`line ${lineNo}: ${why}: ${line}`);
  };
  const nameMatch = NAME.exec(line) ?? fail("no metric name");
  const name = nameMatch[0];
  let i = name.length;
  const labels: Record<string, string> = {};
  if (line[i] === "{") {
    i++;
    while (line[i] !== "}") {
      const ln = LABEL_NAME.exec(line.slice(i)) ?? fail("bad label name");
      const labelName = ln[0];
      i += labelName.length;
      if (line[i] !== "=" || line[i + 1] !== '"') fail(`expected =" after ${labelName}`);
      i += 2;
      let value = "";
      for (;;) {
        const c = line[i];
        if (c === undefined) fail("unterminated label value");
        if (c === '"') break;
        if (c === "\\") {
          const e = line[i + 1];
          if (e === "\\") value += "\\";
          else if (e === '"') value += '"';
          else if (e === "n") value += "\n";
          else fail(`bad escape \\${e}`);
          i += 2;
        } else {
          value += c;
          i++;
        }
      }
      i++;
      if (labelName in labels) fail(`label ${labelName} twice`);
      labels[labelName] = value;
      if (line[i] === ",") i++;
      else if (line[i] !== "}") fail("expected , or } after a label");
    }
    i++;
  }
  if (line[i] !== " ") fail("expected one space before the value");
  const rest = line.slice(i + 1).split(" ");
  if (rest.length > 2 || rest.some((p) => p === "")) fail("expected a value and an optional timestamp");
  const value = parseValue(rest[0]!) ?? fail(`bad value "${rest[0]}"`);
  if (rest[1] !== undefined && !/^-?\d+$/.test(rest[1])) fail(`bad timestamp "${rest[1]}"`);
  return { name, labels, value };
}

/** As Go's strconv.ParseFloat, which Prometheus uses: the special values in any case (prom-client writes "Nan"). */
function parseValue(raw: string): number | null {
  if (/^nan$/i.test(raw)) return NaN;
  const inf = /^([+-]?)(inf|infinity)$/i.exec(raw);
  if (inf) return inf[1] === "-" ? -Infinity : Infinity;
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw) ? Number(raw) : null;
}

function unescapeHelp(raw: string, lineNo: number): string {
  return raw.replace(/\\(.?)/g, (_, e: string) => {
    if (e === "\\") return "\\";
    if (e === "n") return "\n";
    throw new Error(`line ${lineNo}: bad escape in HELP: \\${e}`);
  });
}

function checkHistogram(f: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const g = groups.get(key) ?? groups.set(key, { buckets: [] }).get(key)!;
    if (s.name.endsWith("_bucket")) {
      if (le === undefined) throw new Error(`${f.name}: a bucket without le`);
      g.buckets.push([parseValue(le) ?? NaN, s.value]);
    } else if (s.name.endsWith("_count")) g.count = s.value;
    else g.sum = s.value;
  }
  for (const g of groups.values()) {
    if (g.count === undefined || g.sum === undefined) throw new Error(`${f.name}: _sum or _count missing`);
    const sorted = [...g.buckets].sort((a, b) => a[0] - b[0]);
    if (sorted.some(([le]) => Number.isNaN(le))) throw new Error(`${f.name}: an le that is not a number`);
    for (let i = 1; i < sorted.length; i++) if (sorted[i]![1] < sorted[i - 1]![1]) throw new Error(`${f.name}: buckets not cumulative`);
    const inf = sorted[sorted.length - 1];
    if (!inf || inf[0] !== Infinity) throw new Error(`${f.name}: no le="+Inf" bucket`);
    if (inf[1] !== g.count) throw new Error(`${f.name}: le="+Inf" is ${inf[1]} but _count is ${g.count}`);
  }
}

/** The value of one series, or undefined; `labels` must match exactly. */
export function valueOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name !== name) continue;
      const keys = Object.keys(s.labels);
      if (keys.length === Object.keys(labels).length && keys.every((k) => s.labels[k] === labels[k])) return s.value;
    }
  }
  return undefined;
}
