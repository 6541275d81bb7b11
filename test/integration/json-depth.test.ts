/**
 * Security review, finding 1: one deeply nested JSON body froze the server for seconds and ended
 * in a 500. Bodies nested past 64 levels are refused with 400 by a linear scan before anything
 * parses them, on every surface that parses JSON; and without a token the API reads no body at all.
 */
import { afterEach, expect, test } from "bun:test";
import { buildHandler } from "../../src/app";
import { hmacSha256Hex } from "../../src/lib/hmac";
/** The depth the security review asked for. */
const MAX_JSON_DEPTH = 64;
import { harness, type Harness } from "../helpers/harness";

let h: Harness;
afterEach(() => h.close());

const nested = (levels: number, inner = '"x"') => "[".repeat(levels) + inner + "]".repeat(levels);
const hostileNote = (levels: number) => `{"note":{"title":"x","folder_id":${nested(levels)}}}`;
const json = { "content-type": "application/json" };

async function expectDepthRefused(res: Response) {
  expect(res.status).toBe(400);
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe("bad_request");
  expect(body.error.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
}

test("without a token the API answers 401 and never reads the body", async () => {
  h = await harness();
  const handle = buildHandler(h.deps);
  let pulled = false;
  const body = new ReadableStream({
    pull(c) {
      pulled = true;
      c.enqueue(new TextEncoder().encode(hostileNote(100_000)));
      c.close();
    },
  }, { highWaterMark: 0 });
  const res = await handle(new Request("http://notestream.test/api/v1/notes", { method: "POST", headers: json, body }), "203.0.113.9");
  expect(res.status).toBe(401);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
  expect(pulled).toBe(false);
  // The API's description stays public.
  expect((await h.request("GET", "/api/v1/openapi.json")).status).toBe(200);
});

test("a body nested 100,000 levels deep is 400 on every API write, at once, and the server answers the next request", async () => {
  h = await harness();
  const token = await h.token(await h.account("dev"));
  const { id } = await (await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "n" } } })).json();
  const auth = { ...json, authorization: `Bearer ${token}` };
  const send = (method: string, path: string, body: string, extra: Record<string, string> = {}) =>
    h.request(method, path, { body, headers: { ...auth, ...extra } }) as unknown as Promise<Response>;
  const started = performance.now();
  await expectDepthRefused(await send("POST", "/api/v1/notes", hostileNote(100_000)));
  await expectDepthRefused(await send("PATCH", `/api/v1/notes/${id}`, hostileNote(100_000)));
  await expectDepthRefused(await send("POST", "/api/v1/notes/bulk", `{"notes":[${hostileNote(100_000)}]}`));
  await expectDepthRefused(await send("POST", "/api/v1/notes/by-filename/s.log/append", `{"text":${nested(100_000)}}`));
  await expectDepthRefused(await send("POST", "/api/v1/notes/by-filename/s.log/append", `{"text":${nested(100_000)}}`, { "idempotency-key": "k" }));
  expect(performance.now() - started).toBeLessThan(2_000);
  expect((await h.request("GET", "/up")).status).toBe(200);
  // 64 levels are a shape problem, not a depth one: validation answers, naming the field.
  const deepest = await send("POST", "/api/v1/notes", hostileNote(MAX_JSON_DEPTH - 2));
  expect(deepest.status).toBe(422);
  expect(((await deepest.json()) as { error: { details: { field: string }[] } }).error.details[0]!.field).toBe("note.folder_id");
});

test("a refused value is never printed back: a 3 MB wrong-typed field gets a short error", async () => {
  h = await harness();
  const token = await h.token(await h.account("dev"));
  const res = await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "x", folder_id: ["y".repeat(3_000_000)] } } });
  expect(res.status).toBe(422);
  expect((await res.text()).length).toBeLessThan(1_000);
});

test("the web app's JSON saves, MCP, OAuth registration and the billing webhook refuse deep bodies too", async () => {
  h = await harness({ env: { NOTESTREAM_BILLING_SECRET: "whsec_test" } });
  const deep = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":${nested(100_000, "{}")}}`;
  const token = await h.token(await h.account("dev"));
  await expectDepthRefused((await h.request("POST", "/mcp", { body: deep, headers: { ...json, accept: "application/json, text/event-stream", authorization: `Bearer ${token}` } })) as unknown as Response);
  await expectDepthRefused((await h.request("POST", "/oauth/register", { body: `{"redirect_uris":${nested(100_000)}}`, headers: json })) as unknown as Response);
  await expectDepthRefused((await h.request("POST", "/notes/note_x/save", { body: `{"title":${nested(100_000)}}`, headers: json })) as unknown as Response);
  const raw = `{"meta":${nested(100_000, "{}")}}`;
  await expectDepthRefused((await h.request("POST", "/webhooks/lemonsqueezy", { body: raw, headers: { ...json, "x-signature": hmacSha256Hex("whsec_test", new TextEncoder().encode(raw)) } })) as unknown as Response);
});
