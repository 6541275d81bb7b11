import { cutChars } from "../summarise";
import type { Filter, Step, Template } from "./parse";

/**
 * Renders a parsed template against a payload's parsed JSON. Lookups read own data only: a
 * plain object's own keys and an array's elements, never a prototype's (`constructor`,
 * `__proto__`, an array's `length`), so a path reaches nothing but the payload. A path that
 * leads nowhere, and a filter given a value it does not take, give nothing: a render never throws.
 */

/** A value as the payload holds it; undefined is "missing". */
type Value = unknown;

/** Enough for any line (1,000 characters): past it, the remaining placeholders are not rendered. */
const MAX_OUTPUT = 8_000;

function isPlainObject(v: Value): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function step(v: Value, s: Step): Value {
  const key = "key" in s ? s.key : String(s.index);
  if (Array.isArray(v)) {
    if (!/^(0|[1-9][0-9]*)$/.test(key)) return undefined;
    const i = Number(key);
    return i < v.length ? v[i] : undefined;
  }
  return isPlainObject(v) && Object.hasOwn(v, key) ? v[key] : undefined;
}

/** Text of a value: strings as they are, numbers and booleans written out, objects as compact JSON. */
function text(v: Value): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v) ?? "";
}

const missing = (v: Value) => v === undefined || v === null;

function count(v: Value): Value {
  if (missing(v)) return 0;
  if (Array.isArray(v)) return v.length;
  if (isPlainObject(v)) return Object.keys(v).length;
  if (typeof v === "string") return [...v].length;
  return undefined;
}

function apply(v: Value, f: Filter): Value {
  switch (f.name) {
    case "default":
      return missing(v) || v === "" ? f.arg : v;
    case "upper":
      return missing(v) ? undefined : text(v).toUpperCase();
    case "lower":
      return missing(v) ? undefined : text(v).toLowerCase();
    case "join":
      return Array.isArray(v) ? v.map(text).join(String(f.arg)) : undefined;
    case "count":
      return count(v);
    case "truncate":
      return missing(v) ? undefined : cutChars(text(v), Number(f.arg));
  }
}

/** The template's text for this payload; "" when nothing could be made of it. */
export function renderTemplate(template: Template, root: Value): string {
  let out = "";
  try {
    for (const part of template) {
      if (out.length > MAX_OUTPUT) break;
      if ("text" in part) {
        out += part.text;
        continue;
      }
      let v = part.path.reduce(step, root);
      for (const f of part.filters) v = apply(v, f);
      out += text(v);
    }
  } catch {
    // Nothing above throws on JSON; should something unforeseen, the built-in summary is used.
    return "";
  }
  return out;
}
