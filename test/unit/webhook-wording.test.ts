import { describe, expect, test } from "bun:test";
import { deliveryErrorText, urlProblemText } from "../../src/modules/webhooks/wording";

describe("a delivery's error in words", () => {
  // The raw texts as Bun's sockets, TLS and resolver, Node's, our guard and our timeouts write them.
  const table: [string | null, string | null][] = [
    [null, null],
    ["target refused: getaddrinfo ENOTFOUND", "the name does not resolve"],
    ["target refused: getaddrinfo ENOTFOUND hooks.example.invalid", "the name does not resolve"],
    ["target refused: hooks.example.com did not resolve", "the name does not resolve"],
    ["target refused: getaddrinfo EAI_AGAIN hooks.example.com", "the name could not be looked up: DNS did not answer"],
    ["target refused: queryA ETIMEOUT hooks.example.com", "the name could not be looked up: DNS did not answer"],
    ["connect ECONNREFUSED hooks.example.com:443", "connection refused"],
    ["socket hang up", "the connection was closed before an answer came"],
    ["read ECONNRESET", "the connection was closed before an answer came"],
    ["connect EHOSTUNREACH hooks.example.com:443", "the receiver's network cannot be reached"],
    ["no connection within 5000 ms", "could not connect within 5 s"],
    ["no answer within 10000 ms", "timed out after 10 s"],
    ["no answer within 400 ms", "timed out after 0.4 s"],
    ["connect ETIMEDOUT hooks.example.com:443", "timed out"],
    ["certificate has expired", "TLS certificate not valid: it has expired"],
    ["self signed certificate", "TLS certificate not valid: it is self-signed"],
    ["self-signed certificate in certificate chain", "TLS certificate not valid: it is self-signed"],
    ["Hostname/IP does not match certificate's altnames: Host: a.example. is not in the cert's altnames: DNS:b.example", "TLS certificate not valid: it is for another name"],
    ["unable to verify the first certificate", "TLS certificate not valid"],
    ["unable to get local issuer certificate", "TLS certificate not valid"],
    ["error:100000f7:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER", "the TLS handshake failed: is it an https:// address for a receiver that speaks only http?"],
    ["HTTP 500", "the receiver answered 500 Internal Server Error"],
    ["HTTP 404", "the receiver answered 404 Not Found"],
    ["HTTP 599", "the receiver answered 599"],
    ["redirect 302 not followed", "the receiver answered with a redirect (302), which is not followed: use the address it redirects to"],
    ["target refused: localhost resolves to a non-public address", "the name leads to a private address, which notestream does not call by default. For a receiver in your homelab, the operator can allow its range with NOTESTREAM_WEBHOOK_ALLOW_CIDRS."],
    ["target refused: 10.1.2.3 is not a public address", "the address is not public, which notestream does not call by default. For a receiver in your homelab, the operator can allow its range with NOTESTREAM_WEBHOOK_ALLOW_CIDRS."],
    ["HTTP 500; webhook disabled after 10 consecutive failures", "the receiver answered 500 Internal Server Error; the webhook was turned off after 10 failed deliveries in a row (saving the webhook turns it back on)"],
    ["HTTP 410; webhook disabled (410 Gone)", "the receiver answered 410 Gone; the webhook was turned off because the receiver says it is gone (saving the webhook turns it back on)"],
    // Something no rule knows is shown as it came, without our own prefix.
    ["target refused: something new", "something new"],
  ];
  for (const [raw, words] of table) {
    test(`${JSON.stringify(raw)} reads ${JSON.stringify(words)}`, () => expect(deliveryErrorText(raw)).toBe(words));
  }
});

describe("a refused webhook URL in words", () => {
  const hint = "For a receiver in your homelab, the operator can allow its range with NOTESTREAM_WEBHOOK_ALLOW_CIDRS.";
  test("addresses that are not public say where they are and how an operator opens them", () => {
    expect(urlProblemText({ kind: "not_public", host: "192.168.1.20", range: "private" })).toBe(`This address is on a private network, which notestream does not call by default. ${hint}`);
    expect(urlProblemText({ kind: "not_public", host: "127.0.0.1", range: "loopback" })).toBe(`This address is on the notestream server itself (loopback), which notestream does not call by default. ${hint}`);
    expect(urlProblemText({ kind: "not_public", host: "169.254.169.254", range: "linkLocal" })).toContain("link-local");
    expect(urlProblemText({ kind: "not_public", host: "[2002:7f00:1::]", range: "6to4" })).toContain("not on the public internet");
  });
  test("the rest say what to type", () => {
    expect(urlProblemText({ kind: "not_url" })).toBe("Enter the receiver's full address, starting with https://.");
    expect(urlProblemText({ kind: "not_http" })).toBe("Use an address starting with https:// (or http://).");
    expect(urlProblemText({ kind: "credentials" })).toContain("Take the user name and password out of the address");
    expect(urlProblemText({ kind: "too_long" })).toBe("This address is too long: at most 2,048 characters.");
  });
});
