import { describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config";
import { filenameProblem } from "../../src/lib/filename";
import { linkHeader, pageFrom } from "../../src/lib/pagination";
import { newApiToken } from "../../src/lib/secrets";
import { jsonString, normaliseAppendText, stripControl } from "../../src/lib/text";
import { GB, MB, noteCapFor, tierFor } from "../../src/limits/plans";
import { passwordProblem } from "../../src/modules/accounts/password";

describe("filename rules", () => {
  test("accepts 1 to 200 bytes of visible UTF-8", () => {
    for (const ok of ["a", "a".repeat(200), "日本".repeat(33), "with space.log", "emoji-🎉", "dots...and-dashes_"]) {
      expect(filenameProblem(ok)).toBeNull();
    }
  });
  test("refuses empty, long, slashes, control, invisible and edge whitespace", () => {
    const bad = ["", "a".repeat(201), "a/b", "a\\b", "a\tb", "\u200Bx", "x\u200D", "x\u2066y", "x\uFEFF", "x\u00AD", "x ", " x", "x\u3000", "\u3164"];
    for (const name of bad) expect(filenameProblem(name)).not.toBeNull();
  });
});

describe("append text", () => {
  test("normalises line endings and control characters", () => {
    expect(normaliseAppendText("a\r\nb")).toBe("a\nb\n");
    expect(normaliseAppendText("a\rb")).toBe("ab\n");
    expect(normaliseAppendText("x\n")).toBe("x\n");
    expect(normaliseAppendText("\ta\u0085")).toBe("\ta\n");
    expect(stripControl("a\u0000b\nc\u007f")).toBe("abc");
  });

  test("the shortcut for clean lines agrees with the full rule for every character up to U+00FF and in mixes", () => {
    const full = (t: string) => {
      const s = t.replace(/\r\n/g, "\n").replace(/[\p{Cc}]/gu, (c) => (c === "\n" || c === "\t" ? c : ""));
      return s.length > 0 && !s.endsWith("\n") ? `${s}\n` : s;
    };
    for (let c = 0; c <= 0xff; c++) {
      for (const t of [`a${String.fromCharCode(c)}b`, `${String.fromCharCode(c)}`, `x\r${String.fromCharCode(c)}\n`]) expect(normaliseAppendText(t)).toBe(full(t));
    }
    for (const t of ["plain line", "tab\there", "ends\n", "é ✓ 🎉", "\u2028 line separator stays", ""]) expect(normaliseAppendText(t)).toBe(full(t));
  });
});

describe("log strings", () => {
  test("jsonString is JSON.stringify for every character up to U+FFFF and for paths and methods", () => {
    for (let c = 0; c <= 0xffff; c++) {
      const t = `/api/v1/x${String.fromCharCode(c)}y`;
      expect(jsonString(t)).toBe(JSON.stringify(t));
    }
    for (const t of ["POST", "GET", "/api/v1/notes/by-filename/a%20b.log/append", "", '"', "\\", "🎉", "\ud800"]) expect(jsonString(t)).toBe(JSON.stringify(t));
  });
});

describe("limits as data", () => {
  test("standard tiers follow section 8", () => {
    expect(tierFor("standard", "free")).toMatchObject({ api: false, storage: 50 * MB, tokens: 0, plainBody: 1 * MB, notes: { shared: 10 } });
    expect(tierFor("standard", "personal")).toMatchObject({ api: false, storage: 500 * MB, notes: { shared: 1000 } });
    expect(tierFor("standard", "dev")).toMatchObject({ api: true, storage: 15 * GB, tokens: 3, plainBody: 3 * MB, notes: { rich: 1000, plain: 10000 } });
    expect(tierFor("standard", "team")).toMatchObject({ storage: 50 * GB, tokens: 30, notes: { rich: 1000, plain: 50000 } });
    expect(tierFor("standard", "team").rate).toEqual({ reads: 2000, writes: 200, appends: 1000 });
    expect(tierFor("standard", "dev").richPlain).toBe(2 * MB);
  });
  test("alternate tiers follow section 8, with plan names mapped across", () => {
    expect(tierFor("alternate", "free")).toMatchObject({ storage: null, tokens: 0, seededFolders: 1 });
    expect(tierFor("alternate", "personal").name).toBe("paid");
    expect(tierFor("alternate", "dev")).toMatchObject({ tokens: 1, plainBody: 1.5 * MB, bulk: false, storage: 15 * GB });
    expect(tierFor("alternate", "team")).toMatchObject({ name: "dev_pro", tokens: 10, plainBody: 3 * MB, bulk: true, storage: 30 * GB });
    expect(tierFor("alternate", "dev_pro").rate).toEqual(tierFor("standard", "team").rate);
    expect(tierFor("alternate", "dev").richHtml).toBe(2 * MB);
    expect(tierFor("standard", "dev_pro").name).toBe("team");
  });
  test("unlimited has no caps for any plan", () => {
    const t = tierFor("unlimited", "free");
    expect(t).toMatchObject({ api: true, storage: null, tokens: null, plainBody: null, rate: null, folders: null });
    expect(noteCapFor(t, "plain")).toBeNull();
  });
});

describe("pagination", () => {
  test("clamps limit and builds first/prev/next/last", () => {
    expect(pageFrom({})).toEqual({ limit: 50, offset: 0 });
    expect(pageFrom({ limit: 999 }).limit).toBe(200);
    const link = linkHeader(new URL("http://x/api/v1/notes?kind=stream"), { limit: 10, offset: 0 }, 25);
    expect(link).toBe(
      '<http://x/api/v1/notes?kind=stream&limit=10&offset=0>; rel="first", <http://x/api/v1/notes?kind=stream&limit=10&offset=10>; rel="next", <http://x/api/v1/notes?kind=stream&limit=10&offset=20>; rel="last"',
    );
  });
});

describe("secrets and passwords", () => {
  test("tokens are nst_ and 40 base62 characters, unique", () => {
    const seen = new Set(Array.from({ length: 1000 }, newApiToken));
    expect(seen.size).toBe(1000);
    for (const t of seen) expect(t).toMatch(/^nst_[0-9A-Za-z]{40}$/);
  });
  test("passwords need 8-128 characters with upper, lower, digit and a symbol: the listed ones or any other non-alphanumeric", () => {
    for (const p of ["Abcdef1!", 'Abcdef1"', "Abcdef1-", "Correct-horse-battery-9", "Correct horse battery 9", "Abcdef1_", "Abcdef1€"]) {
      expect({ p, problem: passwordProblem(p) }).toEqual({ p, problem: null });
    }
    // Letters and digits of any script are not symbols.
    for (const p of ["Abcde1!", "abcdef1!", "ABCDEF1!", "Abcdefg!", "Abcdefg1", "Abcdefé1", "A1!" + "a".repeat(126)]) {
      expect(passwordProblem(p)).not.toBeNull();
    }
  });
});

describe("configuration", () => {
  test("defaults run with nothing set", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 8080, limitProfile: "standard", synchronous: "FULL", baseUrl: null, logRequests: true });
    expect(c.dataDir).toEndWith("/data");
  });
  test("bad values are clear errors", () => {
    expect(() => loadConfig({ NOTESTREAM_PORT: "http" })).toThrow(/NOTESTREAM_PORT/);
    expect(() => loadConfig({ NOTESTREAM_LIMIT_PROFILE: "gold" })).toThrow(/standard, alternate, unlimited/);
    expect(() => loadConfig({ NOTESTREAM_BASE_URL: "notes.example.com" })).toThrow(/NOTESTREAM_BASE_URL/);
    expect(loadConfig({ NOTESTREAM_BASE_URL: "https://notes.example.com/" }).baseUrl).toBe("https://notes.example.com");
  });
});
