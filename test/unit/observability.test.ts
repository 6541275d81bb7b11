import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { Writer } from "../../src/db/writer";
import { routePatterns } from "../../src/http/route-patterns";
import { withoutAddresses } from "../../src/mail/queue";
import { domainOf } from "../../src/mail/mailer";
import { Metrics } from "../../src/metrics/metrics";
import { parsePrometheusText, valueOf } from "../helpers/prom-text";

describe("the strict Prometheus text parser (test/helpers/prom-text.ts)", () => {
  const ok = "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\"} 2\n";
  test("reads names, types, help, labels (escapes undone) and values", () => {
    const m = parsePrometheusText(`${ok}# TYPE b gauge\nb{p="a\\"b\\\\c\\nd"} -Inf\nb{p="e"} 1.5e3 1700000000000\n`);
    expect(m.get("a_total")).toMatchObject({ type: "counter", help: "A.", samples: [{ name: "a_total", labels: { x: "1" }, value: 2 }] });
    expect(m.get("b")!.samples.map((s) => [s.labels.p, s.value])).toEqual([["a\"b\\c\nd", -Infinity], ["e", 1500]]);
  });

  test("refuses what Prometheus would refuse or what would hide a bug", () => {
    const bad = [
      ok.slice(0, -1), // no final newline
      `${ok}a_total{x="2"}  3\n`, // two spaces
      `${ok}a_total{x="1"} 3\n`, // the same series twice
      `${ok}a_total{x=1} 3\n`, // unquoted label value
      `${ok}a_total{x="\\t"} 3\n`, // unknown escape
      `${ok}a_total{1x="2"} 3\n`, // bad label name
      `${ok}a_total{x="2"} three\n`, // bad value
      `${ok}# TYPE a_total gauge\n`, // a second TYPE
      `${ok}# TYPE b gauge\nb 1\na_total{x="3"} 1\n`, // a family split in two
      "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n", // not cumulative
      "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n", // no +Inf
      "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 1\n", // +Inf is not the count
      "c 1\n# TYPE c counter\n", // TYPE after the samples
      "# TYPE h histogram\nh 1\n", // a histogram sample without its suffix
    ];
    for (const text of bad) expect(() => parsePrometheusText(text), JSON.stringify(text)).toThrow();
  });
});

describe("route patterns for the request counter", () => {
  const patternOf = routePatterns([
    { method: "GET", path: "/api/v1/notes" },
    { method: "GET", path: "/api/v1/notes/:id" },
    { method: "PATCH", path: "/api/v1/notes/:id" },
    { method: "GET", path: "/api/v1/notes/by-filename/:filename" },
    { method: "POST", path: "/h/:token" },
    { method: "GET", path: "/assets/*" },
    { method: "GET", path: "/" },
  ]);
  test("a path maps to its router pattern, literal segments before parameters", () => {
    expect(patternOf("GET", "/api/v1/notes")).toBe("/api/v1/notes");
    expect(patternOf("GET", "/api/v1/notes/")).toBe("/api/v1/notes");
    expect(patternOf("GET", "/api/v1/notes/note_abc")).toBe("/api/v1/notes/:id");
    expect(patternOf("PATCH", "/api/v1/notes/note_abc")).toBe("/api/v1/notes/:id");
    expect(patternOf("GET", "/api/v1/notes/by-filename/x.log")).toBe("/api/v1/notes/by-filename/:filename");
    expect(patternOf("POST", "/h/inb_secret")).toBe("/h/:token");
    expect(patternOf("GET", "/assets/app/main.js")).toBe("/assets/*");
    expect(patternOf("HEAD", "/")).toBe("/");
  });
  test("another method on a known path keeps the path's pattern; an unknown path has none", () => {
    expect(patternOf("DELETE", "/h/inb_secret")).toBe("/h/:token");
    expect(patternOf("GET", "/api/v1/nope/1")).toBeNull();
    expect(patternOf("GET", "/api/v1/notes/a/b/c")).toBeNull();
  });
});

describe("what logs say of a mail address", () => {
  test("the domain only, also inside an SMTP error", () => {
    expect(domainOf("Ann <Ann.B@Example.COM>")).toBe("example.com");
    expect(domainOf("nobody")).toBe("unknown");
    expect(withoutAddresses("550 <ann+x@example.com>: unknown; bob@ex.org too")).toBe("550 <*@example.com>: unknown; *@ex.org too");
  });
});

describe("Writer.afterCommit", () => {
  function setup() {
    const db = new Database(":memory:");
    db.run("CREATE TABLE t (v TEXT NOT NULL)");
    const writer = new Writer(db);
    const ran: string[] = [];
    return { db, writer, ran, note: (s: string) => writer.afterCommit(() => ran.push(s)) };
  }

  test("runs what a write asked for once its batch committed, in order; drops what a rolled-back write asked for", async () => {
    const { db, writer, ran, note } = setup();
    const outcomes = await Promise.allSettled([
      writer.write(() => (note("a"), db.run("INSERT INTO t VALUES ('a')"))),
      writer.write(() => {
        note("refused");
        throw new Error("cap");
      }),
      writer.write(async () => {
        note("b1");
        try {
          await writer.nested(() => {
            note("nested, undone");
            throw new Error("inner");
          });
        } catch {}
        note("b2");
      }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(ran).toEqual(["a", "b1", "b2"]);
  });

  test("nothing runs before the commit, and outside a write it runs at once", async () => {
    const { writer, ran, note } = setup();
    const done = writer.write(() => {
      note("in");
      expect(ran).toEqual([]);
    });
    await done;
    expect(ran).toEqual(["in"]);
    note("outside");
    expect(ran).toEqual(["in", "outside"]);
  });

  test("the observer hears each batch's size", async () => {
    const { db, writer } = setup();
    const sizes: number[] = [];
    writer.observe({ committed: (n) => sizes.push(n), synced: () => {} });
    await Promise.all([0, 1, 2].map((i) => writer.write(() => db.run("INSERT INTO t VALUES (?)", [String(i)]))));
    await writer.write(() => db.run("INSERT INTO t VALUES ('x')"));
    expect(sizes).toEqual([3, 1]);
  });
});

describe("the hot path's tallies", () => {
  test("the append histogram and the request counter expose as prom-client's own would", async () => {
    const metrics = new Metrics();
    for (const v of [0.0004, 0.003, 0.003, 7]) metrics.appendSeconds.observe(v);
    const slot = metrics.requests.slot("POST", "/api/v1/notes/:id/append");
    metrics.requests.count(slot, 200);
    metrics.requests.count(slot, 200);
    metrics.requests.count(metrics.requests.slot("POST", "/api/v1/notes/:id/append"), 429);
    const m = parsePrometheusText(await metrics.text());
    expect(valueOf(m, "notestream_append_duration_seconds_bucket", { le: "0.0005" })).toBe(1);
    expect(valueOf(m, "notestream_append_duration_seconds_bucket", { le: "0.005" })).toBe(3);
    expect(valueOf(m, "notestream_append_duration_seconds_bucket", { le: "2.5" })).toBe(3);
    expect(valueOf(m, "notestream_append_duration_seconds_bucket", { le: "+Inf" })).toBe(4);
    expect(valueOf(m, "notestream_append_duration_seconds_count")).toBe(4);
    expect(valueOf(m, "notestream_append_duration_seconds_sum")).toBeCloseTo(7.0064, 6);
    const route = "/api/v1/notes/:id/append";
    expect(valueOf(m, "notestream_http_requests_total", { method: "POST", route, status: "200" })).toBe(2);
    expect(valueOf(m, "notestream_http_requests_total", { method: "POST", route, status: "429" })).toBe(1);
    // A second scrape reads the same totals (the counter is refilled, never doubled).
    expect(valueOf(parsePrometheusText(await metrics.text()), "notestream_http_requests_total", { method: "POST", route, status: "200" })).toBe(2);
  });
});
