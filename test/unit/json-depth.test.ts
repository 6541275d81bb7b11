import { describe, expect, test } from "bun:test";
import { jsonDepthExceeds } from "../../src/lib/json-depth";

const nested = (depth: number, open = "[", close = "]") => open.repeat(depth) + close.repeat(depth);
/** `{"a":{"a":…{"a":1}…}}`: objects nested `depth` levels deep. */
const objects = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);

describe("jsonDepthExceeds", () => {
  test("scalars and empty containers are at depth 0 and 1", () => {
    for (const s of ["", "1", "true", "null", '"text"', "  42  "]) expect(jsonDepthExceeds(s, 0)).toBe(false);
    expect(jsonDepthExceeds("[]", 0)).toBe(true);
    expect(jsonDepthExceeds("[]", 1)).toBe(false);
    expect(jsonDepthExceeds("{}", 1)).toBe(false);
  });

  test("depth exactly 64 is within a maximum of 64; 65 exceeds it, for arrays, objects and a mix", () => {
    expect(jsonDepthExceeds(nested(64), 64)).toBe(false);
    expect(jsonDepthExceeds(nested(65), 64)).toBe(true);
    expect(jsonDepthExceeds(objects(64), 64)).toBe(false);
    expect(jsonDepthExceeds(objects(65), 64)).toBe(true);
    const mixed = (depth: number) => '[{"a":'.repeat(depth / 2) + "1" + "}]".repeat(depth / 2);
    expect(jsonDepthExceeds(mixed(64), 64)).toBe(false);
    expect(jsonDepthExceeds(mixed(66), 64)).toBe(true);
  });

  test("depth is the deepest point, not the number of brackets: siblings close before the next opens", () => {
    const wide = "[" + Array.from({ length: 1000 }, () => nested(10)).join(",") + "]";
    expect(jsonDepthExceeds(wide, 11)).toBe(false);
    expect(jsonDepthExceeds(wide, 10)).toBe(true);
  });

  test("brackets inside strings do not count, in keys and in values", () => {
    const deepText = "[".repeat(200) + "{".repeat(200);
    expect(jsonDepthExceeds(JSON.stringify([deepText]), 1)).toBe(false);
    expect(jsonDepthExceeds(JSON.stringify({ [deepText]: deepText }), 1)).toBe(false);
  });

  test("an escaped quote does not end a string, so the brackets after it are still text", () => {
    const s = JSON.stringify(['he said "[[[[" and left', "x"]);
    expect(s).toContain('\\"[[[[\\"');
    expect(jsonDepthExceeds(s, 1)).toBe(false);
  });

  test("an escaped backslash before a quote does end the string: the brackets after it count", () => {
    // ["\\",[[1]]]: the string holds one backslash; a scanner that took \" for an escaped quote
    // would think the string runs on and miss the three levels that follow.
    const s = '["\\\\",[[1]]]';
    expect(JSON.parse(s)).toEqual(["\\", [[1]]]);
    expect(jsonDepthExceeds(s, 3)).toBe(false);
    expect(jsonDepthExceeds(s, 2)).toBe(true);
    expect(jsonDepthExceeds(JSON.stringify(["a\\", "\\\\\"[", [[["x"]]]]), 3)).toBe(true);
    expect(jsonDepthExceeds(JSON.stringify(["a\\", "\\\\\"[", [[["x"]]]]), 4)).toBe(false);
  });

  test("agrees with the nesting JSON.parse sees on real payloads", () => {
    const payload = { a: [{ b: "}]]]", c: ['\\"{{', { d: [[null]] }] }], e: "\\" };
    const text = JSON.stringify(payload);
    const depthOf = (v: unknown): number =>
      v !== null && typeof v === "object" ? 1 + Math.max(0, ...Object.values(v as object).map(depthOf)) : 0;
    const depth = depthOf(payload);
    expect(jsonDepthExceeds(text, depth)).toBe(false);
    expect(jsonDepthExceeds(text, depth - 1)).toBe(true);
  });

  test("a 1,000,000-deep input is judged right, whether it stops early or scans it all (no recursion to overflow)", () => {
    const deep = nested(1_000_000);
    expect(jsonDepthExceeds(deep, 64)).toBe(true);
    expect(jsonDepthExceeds(deep, 1_000_000)).toBe(false);
    expect(jsonDepthExceeds(deep, 999_999)).toBe(true);
  });
});
