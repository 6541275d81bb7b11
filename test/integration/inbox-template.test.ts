import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { errorOf, harness, type Harness } from "../helpers/harness";
import { alertmanager, stripeEvent } from "../helpers/inbox-payloads";

let h: Harness;
let acct: { accountId: string; workspaceId: string; email: string };
let token: string;
beforeEach(async () => {
  h = await harness();
  acct = await h.account("dev");
  token = await h.token(acct, ["read", "write"]);
});
afterEach(() => h.close());

/** The harness's clock, as a line's time stamp. */
const now = () => new Date(h.clock.now()).toISOString();

async function stream(filename = "alerts.log"): Promise<string> {
  const res = await h.request("POST", `/api/v1/notes/by-filename/${filename}/append`, { token, body: { text: "started" } });
  expect(res.status).toBe(201);
  return (await res.json()).id;
}

const patch = (id: string, note: Record<string, unknown>, t = token) => h.request("PATCH", `/api/v1/notes/${id}`, { token: t, body: { note } });
const preview = (id: string, body: unknown, t = token) => h.request("POST", `/api/v1/notes/${id}/inbox/preview`, { token: t, body });

const ALERTMANAGER_TEMPLATE = '[{{ status | upper }}] {{ commonLabels.alertname }}: {{ alerts | count }} alerts, first on {{ alerts[0].labels.instance }}';
const ALERTMANAGER_LINE = "[FIRING] InstanceDown: 2 alerts, first on db-1:9100";

describe("a stream's inbox_template", () => {
  test("is saved, shown in the note record, and removed by null or an empty string", async () => {
    const id = await stream();
    const saved = await patch(id, { inbox_template: ALERTMANAGER_TEMPLATE });
    expect(saved.status).toBe(200);
    expect((await saved.json()).inbox_template).toBe(ALERTMANAGER_TEMPLATE);
    expect((await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json()).inbox_template).toBe(ALERTMANAGER_TEMPLATE);
    expect((await (await patch(id, { inbox_template: null })).json()).inbox_template).toBeNull();
    await patch(id, { inbox_template: "{{ a }}" });
    expect((await (await patch(id, { inbox_template: "" })).json()).inbox_template).toBeNull();
  });

  test("a syntax error is 422 naming note.inbox_template, template_syntax and the position; nothing is saved", async () => {
    const id = await stream();
    await patch(id, { inbox_template: "{{ a }}" });
    const res = await patch(id, { inbox_template: 'fired: {{ constructor.constructor("return process")() }}' });
    expect(res.status).toBe(422);
    const e = await errorOf(res);
    expect(e.code).toBe("validation_failed");
    expect(e.details).toEqual([{ field: "note.inbox_template", code: "template_syntax", message: expect.stringContaining("at character 34"), position: 34 }]);
    expect(e.message).toContain("note.inbox_template: template syntax error at character 34");
    expect((await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json()).inbox_template).toBe("{{ a }}");
  });

  test("over 2,000 characters is 422 too_long; an editable note has no inbox template", async () => {
    const id = await stream();
    expect((await errorOf(await patch(id, { inbox_template: "x".repeat(2001) }))).details[0]).toMatchObject({ field: "note.inbox_template", code: "too_long" });
    expect((await patch(id, { inbox_template: "x".repeat(2000) })).status).toBe(200);
    const created = await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "Plain" } } });
    const res = await patch((await created.json()).id, { inbox_template: "{{ a }}" });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details[0]).toMatchObject({ field: "note.inbox_template", code: "not_a_stream" });
  });
});

describe("POST /notes/{id}/inbox/preview", () => {
  test("renders the given template, else the stream's own, else the built-in summary, time stamp first", async () => {
    const id = await stream();
    const given = await preview(id, { payload: stripeEvent, template: "{{ type }} {{ data.object.amount }} {{ data.object.currency | upper }}" });
    expect(given.status).toBe(200);
    expect(await given.json()).toEqual({ line: `${now()} payment_intent.succeeded 4200 USD` });
    expect(await (await preview(id, { payload: alertmanager })).json()).toEqual({ line: expect.stringMatching(/^\S+Z Alertmanager FIRING 2 alerts/) });
    await patch(id, { inbox_template: ALERTMANAGER_TEMPLATE });
    expect(await (await preview(id, { payload: alertmanager })).json()).toEqual({ line: `${now()} ${ALERTMANAGER_LINE}` });
    // An empty template asks for the built-in summary even when the stream has one.
    expect((await (await preview(id, { payload: alertmanager, template: "" })).json()).line).toContain("Alertmanager FIRING 2 alerts");
  });

  test("a string payload is a plain-text body; a read-only token may preview (it writes nothing)", async () => {
    const id = await stream();
    const reader = await h.token(acct, ["read"]);
    const res = await preview(id, { payload: "backup done in 3 min", template: "backup: {{ body | upper }}" }, reader);
    expect(res.status).toBe(200);
    expect((await res.json()).line).toBe(`${now()} backup: BACKUP DONE IN 3 MIN`);
  });

  test("a bad template is the same 422, naming template and its position", async () => {
    const id = await stream();
    const res = await preview(id, { payload: {}, template: "{{ status | shout }}" });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details).toEqual([{ field: "template", code: "template_syntax", message: expect.stringContaining("at character 13"), position: 13 }]);
  });

  test("a missing payload is 422; another workspace's stream is 404; an editable note is 422", async () => {
    const id = await stream();
    expect((await preview(id, { template: "{{ a }}" })).status).toBe(422);
    const other = await h.token(await h.account("dev"), ["read", "write"]);
    expect((await preview(id, { payload: {} }, other)).status).toBe(404);
    const created = await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "Plain" } } });
    expect((await errorOf(await preview((await created.json()).id, { payload: {} }))).details[0]).toMatchObject({ code: "not_a_stream" });
  });

  test("the OpenAPI document describes the preview", async () => {
    const doc = await (await h.request("GET", "/api/v1/openapi.json")).json();
    const op = doc.paths["/api/v1/notes/{id}/inbox/preview"].post;
    expect(op.responses["200"]).toBeDefined();
    expect(JSON.stringify(doc.components.schemas.Note.properties.inbox_template)).toContain("null");
  });
});

describe("an inbox with a template", () => {
  test("a payload POSTed to the inbox URL becomes the templated line in the stream", async () => {
    const id = await stream();
    const inbox = await (await h.request("POST", `/api/v1/notes/${id}/inbox`, { token })).json();
    await patch(id, { inbox_template: ALERTMANAGER_TEMPLATE });
    const path = new URL(inbox.inbox_url).pathname;
    expect((await h.request("POST", path, { body: JSON.stringify(alertmanager), headers: { "content-type": "application/json" } })).status).toBe(202);
    const received = now();
    await h.jobs.drain();
    // A template that renders nothing for this payload leaves the built-in summary.
    await patch(id, { inbox_template: "{{ nothing_here }}" });
    h.clock.advance(1000);
    expect((await h.request("POST", path, { body: JSON.stringify({ title: "Disk almost full", message: "92%" }), headers: { "content-type": "application/json" } })).status).toBe(202);
    await h.jobs.drain();
    const body = (await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json()).plain_body as string;
    expect(body.split("\n")).toEqual(["started", `${received} ${ALERTMANAGER_LINE}`, `${now()} Disk almost full: 92%`, ""]);
  });
});
