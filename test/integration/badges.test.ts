/**
 * Status badges: a stream's unguessable badge URLs answer its state as an SVG and as shields.io's
 * endpoint JSON, without a token and without any of its content; rotating or removing the badge
 * ends the old URLs at once; making one takes the write scope on a note the token sees.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { runTask } from "../../src/schedule";
import { createStream } from "../../src/modules/streams/create";
import { lookupPrincipal } from "../../src/modules/tokens/service";
import { errorOf, harness, type Harness } from "../helpers/harness";

let h: Harness;
let acct: Awaited<ReturnType<Harness["account"]>>;
let token: string;
beforeEach(async () => {
  h = await harness();
  // Team: room for the several tokens the scope test mints.
  acct = await h.account("team");
  token = await h.token(acct, ["read", "write"]);
});
afterEach(() => h.close());

const SEC = 1000;
const BADGE_URL = /^http:\/\/notestream\.test\/badge\/bdg_[0-9A-Za-z]{32}\.(svg|json)$/;

const append = (filename: string, body: unknown, query = "") =>
  h.request("POST", `/api/v1/notes/by-filename/${encodeURIComponent(filename)}/append${query}`, { token, body });

/** A stream created empty, as the onboarding makes the first one, so nothing has been written to it yet. */
async function emptyStream(filename = "deploys.log"): Promise<string> {
  const principal = (await lookupPrincipal(h.deps, token))!;
  return (await h.deps.writer.write(() => createStream({ deps: h.deps, principal }, filename))).note.id;
}

async function makeBadge(id: string, as = token): Promise<{ svg_url: string; json_url: string }> {
  const res = await h.request("POST", `/api/v1/notes/${id}/badge`, { token: as });
  expect(res.status).toBe(201);
  return res.json();
}

/** Fetches a badge URL as a README host would: no Authorization header. */
const fetchBadge = (url: string) => h.request("GET", new URL(url).pathname);

async function badgeJson(url: string) {
  const res = await fetchBadge(url);
  expect(res.status).toBe(200);
  return res.json();
}

describe("status badges", () => {
  test("a new badge answers SVG and shields.io JSON without a token, status new, never cached", async () => {
    const id = await emptyStream();
    const urls = await makeBadge(id);
    expect(urls.svg_url).toMatch(BADGE_URL);
    expect(urls.json_url).toMatch(BADGE_URL);
    expect(urls.svg_url.replace(/\.svg$/, "")).toBe(urls.json_url.replace(/\.json$/, ""));

    const svg = await fetchBadge(urls.svg_url);
    expect(svg.status).toBe(200);
    expect(svg.headers.get("content-type")).toStartWith("image/svg+xml");
    expect(svg.headers.get("cache-control")).toBe("no-cache");
    expect(svg.headers.get("x-content-type-options")).toBe("nosniff");
    const text = await svg.text();
    expect(text).toStartWith("<svg xmlns=\"http://www.w3.org/2000/svg\"");
    expect(text).toContain(">deploys.log</text>");
    expect(text).toContain(">new</text>");
    expect(text).not.toContain("<script");

    const json = await fetchBadge(urls.json_url);
    expect(json.status).toBe(200);
    expect(json.headers.get("content-type")).toStartWith("application/json");
    expect(json.headers.get("cache-control")).toBe("no-cache");
    expect(await json.json()).toEqual({ schemaVersion: 1, label: "deploys.log", message: "new", color: "blue" });
  });

  test("the badge follows the dead-man's switch: up once armed and written, late past the deadline, failing on a fail signal", async () => {
    const id = await emptyStream();
    const { json_url } = await makeBadge(id);
    expect((await h.request("PATCH", `/api/v1/notes/${id}`, { token, body: { note: { expected_interval_seconds: 3600 } } })).status).toBe(200);
    expect((await badgeJson(json_url)).message).toBe("new");
    expect((await append("deploys.log", { text: "deployed v1.2.3 secret-line" })).status).toBe(200);
    expect(await badgeJson(json_url)).toEqual({ schemaVersion: 1, label: "deploys.log", message: "up", color: "brightgreen" });

    h.clock.advance(3601 * SEC);
    await runTask(h.deps, "deadman");
    expect(await badgeJson(json_url)).toEqual({ schemaVersion: 1, label: "deploys.log", message: "late", color: "orange" });

    const failed = await h.request("POST", "/api/v1/notes/by-filename/deploys.log/append?status=fail", { token, body: "exit 3", headers: { "content-type": "text/plain" } });
    expect(failed.status).toBe(200);
    const body = await badgeJson(json_url);
    expect(body).toEqual({ schemaVersion: 1, label: "deploys.log", message: "failing", color: "red" });
    // Exactly shields.io's four keys: nothing of the stream's lines or size.
    expect(Object.keys(body).sort()).toEqual(["color", "label", "message", "schemaVersion"]);
    const svg = await (await fetchBadge(json_url.replace(/\.json$/, ".svg"))).text();
    expect(svg).toContain(">failing</text>");
    expect(svg).not.toContain("secret-line");
    expect(svg).not.toContain("exit 3");
  });

  test("a paused stream's badge says paused, and up again after its next write", async () => {
    expect((await append("deploys.log", { text: "deployed" })).status).toBe(201);
    const id = (await (await h.request("GET", "/api/v1/notes/by-filename/deploys.log", { token })).json()).id;
    const { json_url } = await makeBadge(id);
    expect((await h.request("POST", `/api/v1/notes/${id}/pause`, { token })).status).toBe(200);
    expect(await badgeJson(json_url)).toEqual({ schemaVersion: 1, label: "deploys.log", message: "paused", color: "lightgrey" });
    expect((await append("deploys.log", { text: "deployed again" })).status).toBe(200);
    expect((await badgeJson(json_url)).message).toBe("up");
  });

  test("a stream written to but never watched is up", async () => {
    expect((await append("plain.log", { text: "hello" })).status).toBe(201);
    const id = (await (await h.request("GET", "/api/v1/notes/by-filename/plain.log", { token })).json()).id;
    expect((await badgeJson((await makeBadge(id)).json_url)).message).toBe("up");
  });

  test("rotating gives new URLs and the old ones answer 404 at once; deleting ends both", async () => {
    const id = await emptyStream();
    const first = await makeBadge(id);
    const second = await makeBadge(id);
    expect(second.json_url).not.toBe(first.json_url);
    for (const url of [first.svg_url, first.json_url]) {
      const res = await fetchBadge(url);
      expect(res.status).toBe(404);
      expect((await errorOf(res)).code).toBe("not_found");
    }
    expect((await badgeJson(second.json_url)).message).toBe("new");

    const del = await h.request("DELETE", `/api/v1/notes/${id}/badge`, { token });
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ id, badge_enabled: false });
    for (const url of [second.svg_url, second.json_url]) expect((await fetchBadge(url)).status).toBe(404);
  });

  test("a trashed stream's badge answers 404; unknown tokens and suffixes answer 404 in the envelope", async () => {
    const id = await emptyStream();
    const { json_url } = await makeBadge(id);
    expect((await h.request("DELETE", `/api/v1/notes/${id}`, { token })).status).toBe(200);
    expect((await fetchBadge(json_url)).status).toBe(404);
    for (const path of ["/badge/bdg_nothing.json", "/badge/nothing.svg", "/badge/bdg_nothing", `${new URL(json_url).pathname.replace(/\.json$/, ".png")}`]) {
      const res = await h.request("GET", path);
      expect(res.status).toBe(404);
      expect((await errorOf(res)).code).toBe("not_found");
    }
  });

  test("another workspace's token or one pinned to another note gets 404 as for any foreign note; a read-only token gets 403; an editable note gets 422", async () => {
    const id = await emptyStream();
    const foreign = await h.token(await h.account("dev"), ["read", "write"]);
    for (const method of ["POST", "DELETE"] as const) {
      const res = await h.request(method, `/api/v1/notes/${id}/badge`, { token: foreign });
      expect(res.status).toBe(404);
      expect((await errorOf(res)).code).toBe("not_found");
    }
    const pinnedElsewhere = await h.token(acct, ["read", "write"], { noteId: await emptyStream("other.log") });
    expect((await h.request("POST", `/api/v1/notes/${id}/badge`, { token: pinnedElsewhere })).status).toBe(404);
    // Pinned to this stream, a token may make its badge, as it may PATCH the stream.
    const pinnedHere = await h.token(acct, ["read", "write"], { noteId: id });
    expect((await badgeJson((await makeBadge(id, pinnedHere)).json_url)).message).toBe("new");
    const readOnly = await h.token(acct, ["read"]);
    for (const method of ["POST", "DELETE"] as const) {
      const res = await h.request(method, `/api/v1/notes/${id}/badge`, { token: readOnly });
      expect(res.status).toBe(403);
    }
    const editable = (await (await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "Plain" } } })).json()).id;
    const res = await h.request("POST", `/api/v1/notes/${editable}/badge`, { token });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details[0].field).toBe("id");
  });

  test("the OpenAPI document lists the badge routes and the public badge paths, without a security", async () => {
    const doc = await (await h.request("GET", "/api/v1/openapi.json")).json();
    expect(Object.keys(doc.paths["/api/v1/notes/{id}/badge"]).sort()).toEqual(["delete", "post"]);
    expect(doc.paths["/api/v1/notes/{id}/badge"].post.responses["201"]).toBeDefined();
    for (const path of ["/badge/{token}.svg", "/badge/{token}.json"]) expect(doc.paths[path].get.security).toEqual([]);
  });

  test("the SVG escapes a filename holding <, & and quotes, and draws it as text", async () => {
    const name = `a<b&"c'.log`;
    const id = await emptyStream(name);
    const { svg_url, json_url } = await makeBadge(id);
    const svg = await (await fetchBadge(svg_url)).text();
    expect(svg).toContain(">a&lt;b&amp;&quot;c&#39;.log</text>");
    expect(svg).not.toContain(name);
    expect((await badgeJson(json_url)).label).toBe(name);
  });
});
