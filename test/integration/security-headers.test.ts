import { afterEach, expect, test } from "bun:test";
import { PAGE_POLICY } from "../../src/http/security-headers";
import { harness, type Harness } from "../helpers/harness";

let h: Harness;
afterEach(() => h.close());

const directives = (policy: string) => new Map(policy.split(";").map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k!, v.join(" ")]));

test("every page forbids framing, inline script and foreign forms, and never sends a Referer", async () => {
  h = await harness();
  for (const path of ["/signin", "/signup", "/reset", "/confirm/resend", "/reset/confirm?token=x"]) {
    const res = await h.request("GET", path);
    expect(res.headers.get("content-type")).toStartWith("text/html");
    const policy = directives(res.headers.get("content-security-policy") ?? "");
    expect(policy.get("default-src")).toBe("'self'");
    expect(policy.get("script-src")).toBe("'self'");
    expect(policy.get("frame-ancestors")).toBe("'none'");
    expect(policy.get("base-uri")).toBe("'none'");
    expect(policy.get("form-action")).toBe("'self'");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("strict-transport-security")).toBeNull();
  }
  // Redirects carry the reset and confirm tokens' protection too.
  const redirect = await h.request("GET", "/notes");
  expect(redirect.status).toBe(303);
  expect(redirect.headers.get("referrer-policy")).toBe("no-referrer");
});

test("pages carry no inline script, style or event handler, which the policy would block", async () => {
  h = await harness();
  expect(PAGE_POLICY).not.toContain("unsafe-inline");
  for (const path of ["/signin", "/signup", "/reset", "/confirm/resend"]) {
    const text = await (await h.request("GET", path)).text();
    expect(text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/i);
    expect(text).not.toMatch(/\sstyle=|\son[a-z]+=/i);
  }
});

test("HSTS is sent when the service's base URL is https", async () => {
  h = await harness({ env: { NOTESTREAM_BASE_URL: "https://notes.example.com" } });
  const res = await h.request("GET", "/signin");
  expect(res.headers.get("strict-transport-security")).toBe("max-age=31536000; includeSubDomains");
  expect((await h.request("GET", "/up")).headers.get("strict-transport-security")).toBe("max-age=31536000; includeSubDomains");
});
