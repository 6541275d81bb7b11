/** The inbox template's card on a stream's settings page: save, preview against the last payload, refusal in place. */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { fieldMessage, sessionBrowser } from "../helpers/form-browser";
import { harness, type Harness } from "../helpers/harness";
import { alertmanager } from "../helpers/inbox-payloads";

let h: Harness;
let acct: { accountId: string; workspaceId: string; email: string };
let token: string;
beforeEach(async () => {
  h = await harness();
  acct = await h.account("dev");
  token = await h.token(acct, ["read", "write"]);
});
afterEach(() => h.close());

const TEMPLATE = "{{ status | upper }} {{ commonLabels.alertname }} x{{ alerts | count }}";

/** A stream whose inbox has received the Alertmanager group. */
async function streamWithPayload(): Promise<string> {
  const id = (await (await h.request("POST", "/api/v1/notes/by-filename/alerts.log/append", { token, body: { text: "started" } })).json()).id;
  const inbox = await (await h.request("POST", `/api/v1/notes/${id}/inbox`, { token })).json();
  const res = await h.request("POST", new URL(inbox.inbox_url).pathname, { body: JSON.stringify(alertmanager), headers: { "content-type": "application/json" } });
  expect(res.status).toBe(202);
  await h.jobs.drain();
  return id;
}

const previewOf = (page: string) => /id="inbox-template-preview">([^<]*)</.exec(page)?.[1] ?? null;

test("Preview draws the page again with the typed template rendered on the last payload, saving nothing", async () => {
  const id = await streamWithPayload();
  const b = await sessionBrowser(h, acct.email);
  const before = await b.get(`/notes/${id}/settings`);
  expect(previewOf(before.text)).toContain("Alertmanager FIRING 2 alerts");
  const res = await b.form(`/notes/${id}/inbox/template`, { _csrf: b.csrf, inbox_template: TEMPLATE, preview: "yes" });
  expect(res.status).toBe(200);
  expect(previewOf(res.text)).toMatch(/^\S+Z FIRING InstanceDown x2$/);
  expect(res.text).toContain(`>${TEMPLATE}</textarea>`);
  expect((await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json()).inbox_template).toBeNull();
});

test("Save stores the template and the page shows it and its preview; an empty one removes it", async () => {
  const id = await streamWithPayload();
  const b = await sessionBrowser(h, acct.email);
  const saved = await b.form(`/notes/${id}/inbox/template`, { _csrf: b.csrf, inbox_template: TEMPLATE });
  expect(saved.status).toBe(303);
  expect((await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json()).inbox_template).toBe(TEMPLATE);
  expect(previewOf((await b.get(`/notes/${id}/settings`)).text)).toMatch(/ FIRING InstanceDown x2$/);
  await b.form(`/notes/${id}/inbox/template`, { _csrf: b.csrf, inbox_template: "  " });
  expect((await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json()).inbox_template).toBeNull();
});

test("a syntax error comes back beside the field with its position, the typed template kept, nothing saved", async () => {
  const id = await streamWithPayload();
  const b = await sessionBrowser(h, acct.email);
  for (const preview of ["", "yes"]) {
    const res = await b.form(`/notes/${id}/inbox/template`, { _csrf: b.csrf, inbox_template: "{{ status | shout }}", preview });
    expect(res.status).toBe(422);
    expect(fieldMessage(res.text, "inbox_template")).toEqual({ invalid: true, message: expect.stringContaining("at character 13") });
    expect(res.text).toContain(">{{ status | shout }}</textarea>");
  }
  expect((await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json()).inbox_template).toBeNull();
});
