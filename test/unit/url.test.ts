import { describe, expect, test } from "bun:test";
import { pathOf } from "../../src/lib/url";

describe("pathOf", () => {
  test("is the URL parser's pathname for plain, odd and hostile URLs", () => {
    const cases = [
      "http://127.0.0.1:8080/api/v1/notes/by-filename/bench.log/append",
      "http://localhost/api/v1/notes/by-filename/a%20b.log/append?x=1",
      "http://localhost/api/v1/../h/secret",
      "http://localhost/api/v1/./notes",
      "http://localhost/api/v1/%2e%2e/h/x",
      "http://localhost/a/b/..",
      "http://localhost/a/.",
      "http://localhost/a//b",
      "http://localhost",
      "http://localhost?q=1",
      "http://localhost/#frag",
      "http://localhost/a#x/../y",
      "http://localhost/a?b=/../c",
      "http://localhost/é",
      "http://localhost/a b",
      'http://localhost/a"b<c>d`e{f}g|h^i',
      "http://localhost/a\\b",
      "http://user:pw@localhost:1/x;y=z/@:!$&'()*+,",
      "https://[::1]:8443/up",
    ];
    for (const href of cases) expect(pathOf(href)).toBe(new URL(href).pathname);
  });

  test("agrees with the parser on random paths over a mix of characters", () => {
    const alphabet = "abz09-._~!$&'()*+,;=:@/%2e?#\\ \"<>é{}|^`[]";
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let i = 0; i < 20000; i++) {
      let path = "/";
      const len = rand(12);
      for (let j = 0; j < len; j++) path += alphabet[rand(alphabet.length)];
      const href = `http://localhost:8080${path}`;
      expect(pathOf(href)).toBe(new URL(href).pathname);
    }
  });
});
