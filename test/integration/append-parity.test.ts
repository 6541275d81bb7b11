/**
 * The append is declared once (src/modules/streams/append/route.ts) and reached two ways: the
 * boundary's fast path (every real request) and the Elysia routes (the OpenAPI document, direct
 * calls). Every case goes through both, each on its own fresh database at the same fake time,
 * and the answers must match: status, content type and body.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { buildApp } from "../../src/app";
import { FakeClock, harness, type Harness } from "../helpers/harness";

const opened: Harness[] = [];
afterEach(async () => {
  for (const h of opened.splice(0)) await h.close();
});

interface Case {
  name: string;
  path: (s: { id: string }) => string;
  body?: string;
  contentType?: string;
  pinned?: "own" | "other";
  headers?: Record<string, string>;
  /** The status both ways must answer, where the case is about it. */
  status?: number;
}

const json = "application/json";
const CASES: Case[] = [
  { name: "a new stream by filename", path: () => "/api/v1/notes/by-filename/new.log/append", body: '{"text":"first"}' },
  { name: "an existing stream by filename", path: () => "/api/v1/notes/by-filename/seed.log/append", body: '{"text":"more"}' },
  { name: "by id", path: ({ id }) => `/api/v1/notes/${id}/append`, body: '{"text":"by id"}' },
  { name: "a trailing slash", path: () => "/api/v1/notes/by-filename/seed.log/append/", body: '{"text":"slash"}' },
  { name: "a trailing slash by id", path: ({ id }) => `/api/v1/notes/${id}/append/`, body: '{"text":"slash"}' },
  { name: "a percent-encoded filename", path: () => "/api/v1/notes/by-filename/caf%C3%A9%20log/append", body: '{"text":"x"}' },
  { name: "broken percent-encoding", path: () => "/api/v1/notes/by-filename/%E0%A4%A/append", body: '{"text":"x"}' },
  { name: "a bad filename", path: () => "/api/v1/notes/by-filename/%20lead/append", body: '{"text":"x"}' },
  { name: "a body that is not JSON", path: () => "/api/v1/notes/by-filename/seed.log/append", body: "text=hello" },
  { name: "a form content type", path: () => "/api/v1/notes/by-filename/seed.log/append", body: "text=hello", contentType: "application/x-www-form-urlencoded" },
  { name: "a JSON array", path: () => "/api/v1/notes/by-filename/seed.log/append", body: '["text"]' },
  { name: "JSON null", path: () => "/api/v1/notes/by-filename/seed.log/append", body: "null" },
  { name: "an empty object", path: () => "/api/v1/notes/by-filename/seed.log/append", body: "{}" },
  { name: "an empty text", path: () => "/api/v1/notes/by-filename/seed.log/append", body: '{"text":""}' },
  { name: "a blank text", path: () => "/api/v1/notes/by-filename/seed.log/append", body: '{"text":" \\u0001 "}' },
  { name: "text of the wrong type", path: () => "/api/v1/notes/by-filename/seed.log/append", body: '{"text":5}' },
  { name: "an unknown id", path: () => "/api/v1/notes/note_missing/append", body: '{"text":"x"}' },
  { name: "a pinned token on its own stream", path: ({ id }) => `/api/v1/notes/${id}/append`, body: '{"text":"x"}', pinned: "own" },
  { name: "a pinned token on another stream", path: () => "/api/v1/notes/by-filename/other.log/append", body: '{"text":"x"}', pinned: "other" },
  { name: "with an Idempotency-Key (first use)", path: () => "/api/v1/notes/by-filename/seed.log/append", body: '{"text":"once"}', headers: { "idempotency-key": "k1" } },
  { name: "JSON nested too deep", path: () => "/api/v1/notes/by-filename/seed.log/append", body: `{"text":${"[".repeat(100)}${"]".repeat(100)}}` },
  { name: "text/plain: the body is the text", path: () => "/api/v1/notes/by-filename/new.log/append", body: "deploy ok", contentType: "text/plain", status: 201 },
  { name: "text/plain; charset=utf-8 by id", path: ({ id }) => `/api/v1/notes/${id}/append`, body: "café\r\nok", contentType: "text/plain; charset=utf-8", status: 200 },
  { name: "text/plain that looks like JSON", path: () => "/api/v1/notes/by-filename/seed.log/append", body: '{"text":"x"}', contentType: "text/plain", status: 200 },
  { name: "text/plain nested brackets are text", path: () => "/api/v1/notes/by-filename/seed.log/append", body: "[".repeat(100), contentType: "text/plain", status: 200 },
  { name: "an empty text/plain body", path: () => "/api/v1/notes/by-filename/seed.log/append", body: "", contentType: "text/plain", status: 422 },
  { name: "text/plain in another charset", path: () => "/api/v1/notes/by-filename/seed.log/append", body: "x", contentType: "text/plain; charset=latin1", status: 400 },
  { name: "text/plain with an Idempotency-Key", path: () => "/api/v1/notes/by-filename/seed.log/append", body: "once", contentType: "text/plain", headers: { "idempotency-key": "k2" }, status: 200 },
  { name: "another text type", path: () => "/api/v1/notes/by-filename/seed.log/append", body: "x", contentType: "text/html", status: 400 },
];

/** A fresh workspace with one stream, at a fixed time, and a token (pinned when asked). */
async function setUp(c: Case) {
  const h = await harness({ clock: new FakeClock() });
  opened.push(h);
  const owner = await h.account("dev", "parity@example.com");
  const full = await h.token(owner);
  const seed = await (await h.request("POST", "/api/v1/notes/by-filename/seed.log/append", { token: full, body: { text: "seed" } })).json();
  await h.request("POST", "/api/v1/notes/by-filename/other.log/append", { token: full, body: { text: "other" } });
  const token = c.pinned ? await h.token(owner, ["read", "write"], { noteId: seed.id }) : full;
  return { h, token, id: seed.id as string };
}

/** Ids and times differ between two databases; everything else must not. */
function normalise(text: string, id: string): string {
  return text.replaceAll(id, "<seed>").replace(/note_[0-9A-Za-z]+/g, "<id>");
}

describe("the append answers alike through the boundary and through the router", () => {
  for (const c of CASES) {
    test(c.name, async () => {
      const a = await setUp(c);
      const b = await setUp(c);
      const headers = { "content-type": c.contentType ?? json, authorization: "", ...c.headers };
      const viaBoundary = await a.h.request("POST", c.path(a), { body: c.body, headers: { ...headers, authorization: `Bearer ${a.token}` } });
      const router = buildApp(b.h.deps);
      const viaRouter = await router.handle(
        new Request(`http://notestream.test${c.path(b)}`, { method: "POST", headers: { ...headers, authorization: `Bearer ${b.token}` }, body: c.body }),
      );
      const [textA, textB] = [await viaBoundary.text(), await viaRouter.text()];
      expect({ status: viaBoundary.status, body: normalise(textA, a.id) }).toEqual({ status: viaRouter.status, body: normalise(textB, b.id) });
      if (c.status) expect(viaBoundary.status).toBe(c.status);
      expect(viaBoundary.headers.get("content-type")?.split(";")[0]).toBe(viaRouter.headers.get("content-type")?.split(";")[0]!);
      // Every append is charged to the appends bucket, with or without the trailing slash.
      expect(viaBoundary.headers.get("x-ratelimit-bucket")).toBe("appends");
    });
  }
});
