import { describe, expect, test } from "bun:test";
import { payloadSummary } from "../../src/modules/inbox/line";
import { compiled, MAX_TEMPLATE_CHARS, render, templateProblem } from "../../src/modules/inbox/template/compile";
import { alertmanager, stripeEvent } from "../helpers/inbox-payloads";


describe("inbox templates: paths", () => {
  test("dotted names and [N] indexes reach into the payload", () => {
    expect(render("{{ alerts[1].labels.instance }}", alertmanager)).toBe("db-2:9100");
    expect(render("{{ data.object.amount }} {{ data.object.metadata.order_id }}", stripeEvent)).toBe("4200 6735");
    expect(render('{{ alerts[0]["labels"].alertname }}', alertmanager)).toBe("InstanceDown");
    expect(render("{{ [1] }}", ["a", "b"])).toBe("b");
  });
  test("a missing path, an index past the end and a path through a string render empty, the text around stays", () => {
    expect(render("<{{ nope }}|{{ alerts[5].labels }}|{{ status.length }}|{{ alerts[0].labels.alertname.x }}>", alertmanager)).toBe("<|||>");
  });
  test("null renders empty, numbers and booleans as written, objects and arrays as compact JSON", () => {
    expect(render("[{{ a }}][{{ b }}][{{ c }}][{{ d }}][{{ e }}]", { a: null, b: 0, c: false, d: { x: [1, "y"] }, e: [1, 2] })).toBe('[][0][false][{"x":[1,"y"]}][[1,2]]');
  });
  test("keys holding any character are read with [\"…\"]", () => {
    expect(render('{{ labels["app.kubernetes.io/name"] }}', { labels: { "app.kubernetes.io/name": "api" } })).toBe("api");
  });
});

describe("inbox templates: filters", () => {
  test("default stands in for missing, null and empty values only", () => {
    expect(render('{{ a | default "x" }},{{ b | default "x" }},{{ c | default "x" }},{{ d | default "x" }},{{ e | default "x" }}', { b: null, c: "", d: 0, e: "set" })).toBe("x,x,x,0,set");
  });
  test("upper and lower change case; on a missing value they leave it missing for a later default", () => {
    expect(render("{{ s | upper }} {{ s | lower }}", { s: "Firing" })).toBe("FIRING firing");
    expect(render('{{ gone | upper | default "none" }}', {})).toBe("none");
  });
  test("join writes an array's items with the separator; anything else is a mismatch and renders empty", () => {
    expect(render('{{ data.object.payment_method_types | join ", " }}', stripeEvent)).toBe("card, link");
    expect(render('{{ xs | join "/" }}', { xs: ["a", 1, null, { b: 2 }] })).toBe('a/1//{"b":2}');
    expect(render('[{{ type | join ", " }}]', stripeEvent)).toBe("[]");
  });
  test("count counts an array's items, an object's keys and a string's characters; missing is 0", () => {
    expect(render("{{ alerts | count }} {{ commonLabels | count }} {{ status | count }} {{ nothing | count }}", alertmanager)).toBe("2 3 6 0");
    expect(render("[{{ n | count }}]", { n: 5 })).toBe("[]");
  });
  test("truncate N keeps at most N characters, the last an ellipsis when cut", () => {
    expect(render("{{ s | truncate 5 }}|{{ s | truncate 20 }}", { s: "db-1:9100 is down" })).toBe("db-1…|db-1:9100 is down");
    expect(render("{{ o | truncate 4 }}", { o: { a: 1 } })).toBe('{"a…');
  });
  test("filters chain left to right", () => {
    expect(render('{{ alerts[0].annotations.summary | truncate 10 | upper }}', alertmanager)).toBe("DB-1:9100…");
    expect(render('{{ missing | default "abcdef" | truncate 3 | upper }}', {})).toBe("AB…");
  });
});

describe("inbox templates: nothing but the payload is reachable", () => {
  test("constructor, __proto__, prototype and an array's length render nothing", () => {
    const t = "[{{ constructor }}][{{ __proto__ }}][{{ constructor.name }}][{{ __proto__.toString }}][{{ alerts.length }}][{{ toString }}]";
    expect(render(t, alertmanager)).toBe("[][][][][][]");
  });
  test('{{ constructor.constructor("return process")() }} is a syntax error at the "(": no call is part of the language', () => {
    const p = templateProblem('{{ constructor.constructor("return process")() }}', "note.inbox_template");
    expect(p).toMatchObject({ field: "note.inbox_template", code: "template_syntax", position: 27 });
    expect(p!.message).toContain('at character 27: unexpected "("');
  });
  test("a payload's own key named constructor is data, and is read as such", () => {
    expect(render("{{ constructor }}", JSON.parse('{"constructor": "own"}'))).toBe("own");
  });
});

describe("inbox templates: syntax errors name their position", () => {
  const cases: [string, number, string][] = [
    ["ok {{ a", 4, '"{{" is not closed'],
    ["{{ }}", 4, "an empty placeholder"],
    ["{{ a | shout }}", 8, 'unknown filter "shout"'],
    ["{{ a | truncate }}", 17, "needs a whole number"],
    ["{{ a | truncate 0 }}", 17, "at least 1"],
    ["{{ a | default x }}", 16, "expected a quoted string"],
    ['{{ a | join ", }}', 13, "the string is not closed"],
    ["{{ a[x] }}", 6, "expected a whole number"],
    ["{{ a b }}", 6, 'unexpected "b"'],
    ["{{ a {{ b }} }}", 6, '"{{" inside a placeholder'],
    ["{{ a.+ }}", 6, "expected a name"],
    ["é🎉 {{ a | nope }}", 11, 'unknown filter "nope"'],
  ];
  for (const [source, position, words] of cases) {
    test(`${JSON.stringify(source)}: at character ${position}, ${words}`, () => {
      const p = templateProblem(source, "f")!;
      expect(p).toMatchObject({ code: "template_syntax", position });
      expect(p.message).toContain(`at character ${position}`);
      expect(p.message).toContain(words);
    });
  }
  test("text without placeholders, a lone }} and a string holding }} are fine", () => {
    for (const ok of ["plain text", "a }} b", '{{ a | default "}}" }}', "{{a|upper}}"]) expect(templateProblem(ok, "f")).toBeNull();
    expect(render('{{ a | default "}}" }}', {})).toBe("}}");
  });
  test(`over ${MAX_TEMPLATE_CHARS} characters is too long; NUL is refused`, () => {
    expect(templateProblem("é".repeat(MAX_TEMPLATE_CHARS), "f")).toBeNull();
    expect(templateProblem("é".repeat(MAX_TEMPLATE_CHARS + 1), "f")).toMatchObject({ code: "too_long" });
    expect(templateProblem("a\u0000", "f")).toMatchObject({ code: "invalid" });
  });
});

describe("inbox templates: parsed once", () => {
  test("the same text gives the same parsed template (or the same error) again, not a new parse", () => {
    const t = "{{ status | upper }} cached";
    expect(compiled(t)).toBe(compiled(t));
    expect(compiled("{{ a |")).toBe(compiled("{{ a |"));
    expect(compiled(t)).not.toBe(compiled(`${t} `));
  });
});

describe("inbox templates: the line", () => {
  const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
  const JSON_TYPE = "application/json";
  test("an Alertmanager group becomes the line its template says", () => {
    const t = '[{{ status | upper }}] {{ commonLabels.alertname }} on {{ alerts | count }} hosts: {{ alerts[0].labels.instance }} (first), severity {{ commonLabels.severity | default "none" }}';
    expect(payloadSummary(t, JSON_TYPE, {}, json(alertmanager))).toBe("[FIRING] InstanceDown on 2 hosts: db-1:9100 (first), severity critical");
  });
  test("a Stripe event becomes the line its template says", () => {
    const t = "Stripe {{ type }}: {{ data.object.amount }} {{ data.object.currency | upper }} from {{ data.object.receipt_email | default \"unknown\" }} ({{ data.object.id }})";
    expect(payloadSummary(t, JSON_TYPE, {}, json(stripeEvent))).toBe("Stripe payment_intent.succeeded: 4200 USD from jenny@example.com (pi_3MtwBwLkdIwHu7ix28a3tqPa)");
  });
  test("the result is one line: newlines and control characters go, spaces fold", () => {
    expect(payloadSummary("a\n{{ s }}\tb", JSON_TYPE, {}, json({ s: "x\u0007  y\r\nz" }))).toBe("a x y z b");
  });
  test("a template that renders nothing (or only spaces) falls back to the built-in summary", () => {
    expect(payloadSummary("  {{ nope }} \n", JSON_TYPE, {}, json({ title: "Disk almost full", message: "92%" }))).toBe("Disk almost full: 92%");
  });
  test("a form-encoded payload's fields are strings; a plain-text body is {{ body }}", () => {
    const form = new TextEncoder().encode("event=deploy&count=3&who=ann+b");
    expect(payloadSummary("{{ event | upper }} x{{ count }} by {{ who }}", "application/x-www-form-urlencoded", {}, form)).toBe("DEPLOY x3 by ann b");
    const text = new TextEncoder().encode("backup finished\nin 3 minutes");
    expect(payloadSummary("text: {{ body | truncate 16 }}", "text/plain", {}, text)).toBe("text: backup finished…");
  });
  test("JSON too deep to parse is text: only {{ body }} sees it", () => {
    const deep = new TextEncoder().encode("[".repeat(100) + "]".repeat(100));
    expect(payloadSummary("{{ body | count }} chars", JSON_TYPE, {}, deep)).toBe("200 chars");
  });
});
