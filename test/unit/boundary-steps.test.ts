import { describe, expect, test } from "bun:test";
import type { Deps } from "../../src/deps";
import { chain, type Exchange, type Step } from "../../src/http/exchange";
import { NotFound } from "../../src/http/errors";
import type { FastMatch } from "../../src/http/fast-route";
import { RateLimiter } from "../../src/http/rate-limit";
import { addressLimit } from "../../src/http/steps/address-limit";
import { apiAnswer } from "../../src/http/steps/api-answer";
import { body } from "../../src/http/steps/body";
import { idempotent } from "../../src/http/steps/idempotent";
import { identify } from "../../src/http/steps/identify";
import { tokenLimit } from "../../src/http/steps/token-limit";
import { answerPreflight } from "../../src/http/steps/preflight";
import type { Principal } from "../../src/principal";

// Each step of the boundary (src/http/steps/) on its own, with a hand-made exchange: what it
// answers itself, what it passes on, and what it leaves on the exchange for the steps after it.
const clock = { now: () => 1_700_000_000_000 };
const deps = { clock, limiter: new RateLimiter(clock as never), config: { limitProfile: "unlimited" } } as unknown as Deps;
const ok = () => Promise.resolve(new Response("routed"));
const principal = { tokenId: "t1", workspaceId: "w1" } as Principal;
const fast = { bucket: "appends" } as FastMatch;

function exchange(request: Request, extra: Partial<Exchange> = {}): Exchange {
  const path = new URL(request.url).pathname;
  return { request, path, id: "req-1", api: path.startsWith("/api/v1/"), started: 0, fast: null, ip: () => "192.0.2.1", headers: { "x-request-id": "req-1" }, text: null, ...extra };
}

describe("the boundary's steps", () => {
  test("run in their order, and a step that answers ends the list", async () => {
    const seen: string[] = [];
    const step = (name: string, answers = false): Step => async (x, next) => (seen.push(name), answers ? new Response(name) : next(x));
    const x = exchange(new Request("http://x/a"));
    const answered = await chain([step("one"), step("two", true), step("three")], () => (seen.push("route"), ok()))(x);
    expect(await answered.text()).toBe("two");
    expect(seen).toEqual(["one", "two"]);
  });

  test("a CORS preflight to a covered path is answered without going further", async () => {
    const preflight = answerPreflight({ covers: (p) => p === "/mcp", origins: new Set(["https://app.example"]) });
    const request = new Request("http://x/mcp", { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "POST" } });
    const answered = await preflight(exchange(request), () => Promise.reject(new Error("went further")));
    expect(answered.status).toBe(204);
    expect(await (await preflight(exchange(new Request("http://x/other", { method: "OPTIONS" })), ok)).text()).toBe("routed");
  });

  test("the body step caps the body, and reads it only when the fast route does not read its own", async () => {
    const post = (headers: Record<string, string> = {}) => new Request("http://x/api/v1/notes", { method: "POST", body: '{"a":1}', headers: { "content-type": "application/json", ...headers } });
    const routed = exchange(post());
    await body(1024)(routed, ok);
    expect(routed.text).toBe('{"a":1}');
    const appended = exchange(post(), { fast });
    await body(1024)(appended, ok);
    expect(appended.text).toBeNull();
    expect(appended.request.bodyUsed).toBe(false);
    const keyed = exchange(post({ "idempotency-key": "k1" }), { fast });
    await body(1024)(keyed, ok);
    expect(keyed.text).toBe('{"a":1}');
    await expect(body(3)(exchange(post()), ok)).rejects.toMatchObject({ code: "payload_too_large" });
  });

  test("every API answer carries the exchange's headers, and a 4xx to a token goes to its error log", async () => {
    const logged: unknown[] = [];
    const step = apiAnswer((e) => void logged.push({ ...e, principal: e.principal.tokenId }));
    const x = exchange(new Request("http://x/api/v1/notes/n1"), { principal, headers: { "x-request-id": "req-1", "x-ratelimit-limit": "10" } });
    const answered = await step(x, () => Promise.reject(new NotFound("note")));
    expect(answered.status).toBe(404);
    expect(answered.headers.get("x-ratelimit-limit")).toBe("10");
    expect(answered.headers.get("x-request-id")).toBe("req-1");
    await Bun.sleep(5);
    expect(logged).toEqual([{ principal: "t1", method: "GET", path: "/api/v1/notes/n1", status: 404, code: "not_found" }]);
  });

  test("a per-address limit refuses the request over it, with the limit's headers", async () => {
    const step = addressLimit(deps, "deep-test", 1);
    const first = await step(exchange(new Request("http://x/up/deep")), ok);
    expect(await first.text()).toBe("routed");
    expect(first.headers.get("x-ratelimit-remaining")).toBe("0");
    const second = await step(exchange(new Request("http://x/up/deep")), () => Promise.reject(new Error("went further")));
    expect(second.status).toBe(429);
    expect(second.headers.get("x-ratelimit-limit")).toBe("1");
  });

  test("without an Idempotency-Key the idempotency step passes the request straight on", async () => {
    const x = exchange(new Request("http://x/api/v1/notes", { method: "POST", body: "{}" }), { principal });
    expect(await (await idempotent(deps, async () => {})(x, ok)).text()).toBe("routed");
    expect(x.idempotency).toBeUndefined();
  });

  test("a step that only checks hands on the rest's own answer: no frame of its own on an append's way back", async () => {
    const append = () =>
      exchange(
        new Request("http://x/api/v1/notes/n1/append", { method: "POST", body: '{"text":"a"}', headers: { authorization: "Bearer s1", "content-type": "application/json", "content-length": "12" } }),
        { principal, fast },
      );
    const tokens = { secretOf: (h: string) => h.slice(7), cached: () => principal, lookup: () => Promise.reject(new Error("looked up")) };
    const answered = ok();
    const rest = () => answered;
    for (const step of [identify(deps, tokens, rest), tokenLimit(deps), body(1024), idempotent(deps, async () => {}), answerPreflight({ covers: () => true, origins: new Set() })]) {
      expect(step(append(), rest)).toBe(answered);
    }
    const x = append();
    await tokenLimit(deps)(x, rest);
    expect(x.headers["x-ratelimit-limit"]).toBeDefined();
  });
});
