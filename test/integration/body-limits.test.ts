import { afterEach, describe, expect, test } from "bun:test";
import { errorOf, harness, type Harness } from "../helpers/harness";

let h: Harness;
afterEach(() => h.close());

const MB = 1024 * 1024;

/** A body with no Content-Length, streamed in 64 KB chunks, as `Transfer-Encoding: chunked` arrives. */
function chunked(bytes: number): ReadableStream<Uint8Array> {
  let sent = 0;
  const prefix = new TextEncoder().encode('{"text":"');
  return new ReadableStream({
    pull(controller) {
      if (sent === 0) {
        controller.enqueue(prefix);
        sent += prefix.length;
        return;
      }
      if (sent >= bytes - 2) {
        controller.enqueue(new TextEncoder().encode('"}'));
        controller.close();
        return;
      }
      const n = Math.min(64 * 1024, bytes - 2 - sent);
      controller.enqueue(new Uint8Array(n).fill(120));
      sent += n;
    },
  });
}

function post(h: Harness, token: string, body: string | ReadableStream, headers: Record<string, string>) {
  return h.request("POST", "/api/v1/notes/by-filename/big/append", { token, body, headers });
}

describe("request body caps", () => {
  test("a Content-Length over 4 MB is 413 before anything is read, and nothing is written", async () => {
    h = await harness({ profile: "unlimited" });
    const token = await h.token(await h.account("dev"));
    const body = JSON.stringify({ text: "x".repeat(4 * MB) });
    const res = await post(h, token, body, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) });
    expect(res.status).toBe(413);
    expect((await errorOf(res)).code).toBe("payload_too_large");
    expect((await h.request("GET", "/api/v1/notes/by-filename/big", { token })).status).toBe(404);
  });

  test("a chunked body that grows past 4 MB is cut off with 413 and nothing is written", async () => {
    h = await harness({ profile: "unlimited" });
    const token = await h.token(await h.account("dev"));
    const res = await post(h, token, chunked(4 * MB + 1), { "content-type": "application/json" });
    expect(res.status).toBe(413);
    expect((await errorOf(res)).code).toBe("payload_too_large");
    expect((await h.request("GET", "/api/v1/notes/by-filename/big", { token })).status).toBe(404);
  });

  test("a chunked body under the cap goes through whole", async () => {
    h = await harness({ profile: "unlimited" });
    const token = await h.token(await h.account("dev"));
    const res = await post(h, token, chunked(2 * MB), { "content-type": "application/json" });
    expect(res.status).toBe(201);
    expect((await res.json()).byte_size).toBe(2 * MB - 11 + 1);
  });

  test("the alternate profile's API cap is 3 MB", async () => {
    h = await harness({ profile: "alternate" });
    const token = await h.token(await h.account("dev"));
    const body = JSON.stringify({ text: "x".repeat(3 * MB) });
    const res = await post(h, token, body, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) });
    expect(res.status).toBe(413);
    expect((await post(h, token, chunked(3 * MB + 1), { "content-type": "application/json" })).status).toBe(413);
  });
});
