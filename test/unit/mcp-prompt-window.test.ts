import { describe, expect, test } from "bun:test";
import { window } from "../../src/mcp/prompts";

const at = (minute: number) => new Date(Date.UTC(2026, 10, 27, 9, minute)).toISOString();
const lines = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ text: `line ${i}`, at: at(from + i) }));

describe("the lines a prompt embeds", () => {
  test("only the lines in the span, oldest first, nothing said left out when all fit", () => {
    const w = window(lines(10), Date.parse(at(3)), Date.parse(at(5)), 10_000);
    expect(w.lines.map((l) => l.text)).toEqual(["line 3", "line 4", "line 5"]);
    expect(w.omitted).toEqual([]);
  });

  test("past the bound the newest lines are kept and the left-out ones counted", () => {
    const w = window(lines(10), -Infinity, Infinity, 3 * (6 + 26));
    expect(w.lines.map((l) => l.text)).toEqual(["line 7", "line 8", "line 9"]);
    expect(w.omitted).toEqual(["7 earlier lines in this span left out to keep the prompt short"]);
  });

  test("a span reaching past the newest 1,000 lines says that older ones are not included", () => {
    const w = window(lines(1000, 10), Date.parse(at(0)), Infinity, 1_000_000);
    expect(w.lines.length).toBe(1000);
    expect(w.omitted).toEqual([`lines before ${at(10)} are older than the newest 1000 and not included`]);
  });
});
