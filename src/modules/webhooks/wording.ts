import { STATUS_CODES } from "node:http";
import { MAX_URL_LENGTH, type UrlProblem } from "./target";

/**
 * Webhook problems in the words of the pages. The API keeps its own text (a delivery's `error`
 * is what the socket, the resolver or the guard said, for scripts and bug reports); a person
 * reading the deliveries list gets "connection refused", not "connect ECONNREFUSED host:80".
 */

const ALLOW_HINT = "For a receiver in your homelab, the operator can allow its range with NOTESTREAM_WEBHOOK_ALLOW_CIDRS.";

function where(range: string): string {
  switch (range) {
    case "loopback":
      return "is on the notestream server itself (loopback)";
    case "private":
    case "uniqueLocal":
    case "carrierGradeNat":
      return "is on a private network";
    case "linkLocal":
      return "is link-local (where cloud metadata services answer)";
    default:
      return "is not on the public internet";
  }
}

/** A refused webhook URL, said beside its field. */
export function urlProblemText(p: UrlProblem): string {
  switch (p.kind) {
    case "too_long":
      return `This address is too long: at most ${MAX_URL_LENGTH.toLocaleString("en")} characters.`;
    case "not_url":
      return "Enter the receiver's full address, starting with https://.";
    case "not_http":
      return "Use an address starting with https:// (or http://).";
    case "credentials":
      return "Take the user name and password out of the address: receivers check the signature headers instead.";
    case "not_public":
      return `This address ${where(p.range)}, which notestream does not call by default. ${ALLOW_HINT}`;
  }
}

const seconds = (ms: string) => `${Number((Number(ms) / 1000).toFixed(1))} s`;

/**
 * What went wrong with a delivery attempt, matched on the raw error, first match wins. The raw
 * texts come from target.ts (the guard), http.ts (our timeouts), Node's and Bun's sockets, TLS and
 * resolver (their codes and messages), and delivery.ts (HTTP status, redirects).
 */
export const DELIVERY_ERRORS: readonly [RegExp, (m: RegExpMatchArray) => string][] = [
  [/did not resolve|ENOTFOUND|EAI_NONAME|EAI_NODATA|ENODATA|NXDOMAIN/i, () => "the name does not resolve"],
  [/(?:getaddrinfo|query\w*) (?:ECONNREFUSED|ETIMEOUT)|EAI_AGAIN|ESERVFAIL/, () => "the name could not be looked up: DNS did not answer"],
  [/resolves to a non-public address/, () => `the name leads to a private address, which notestream does not call by default. ${ALLOW_HINT}`],
  [/is not a public address/, () => `the address is not public, which notestream does not call by default. ${ALLOW_HINT}`],
  [/ECONNREFUSED/, () => "connection refused"],
  [/ECONNRESET|socket hang up|EPIPE/i, () => "the connection was closed before an answer came"],
  [/EHOSTUNREACH|ENETUNREACH|EHOSTDOWN|ENETDOWN/, () => "the receiver's network cannot be reached"],
  [/no connection within (\d+) ms/, (m) => `could not connect within ${seconds(m[1]!)}`],
  [/no answer within (\d+) ms/, (m) => `timed out after ${seconds(m[1]!)}`],
  [/ETIMEDOUT/, () => "timed out"],
  [/certificate has expired|CERT_HAS_EXPIRED/i, () => "TLS certificate not valid: it has expired"],
  [/self[- ]signed|SELF_SIGNED/i, () => "TLS certificate not valid: it is self-signed"],
  [/altname|does not match certificate|ALTNAME_INVALID|hostname mismatch/i, () => "TLS certificate not valid: it is for another name"],
  [/certificate|CERT_|unable to verify|local issuer/i, () => "TLS certificate not valid"],
  [/SSL routines|WRONG_VERSION_NUMBER|EPROTO|handshake/i, () => "the TLS handshake failed: is it an https:// address for a receiver that speaks only http?"],
  [/^redirect (\d{3}) not followed$/, (m) => `the receiver answered with a redirect (${m[1]}), which is not followed: use the address it redirects to`],
  [/^HTTP (\d{3})$/, (m) => `the receiver answered ${m[1]}${STATUS_CODES[Number(m[1])] ? ` ${STATUS_CODES[Number(m[1])]}` : ""}`],
];

/** The note delivery.ts appends when an attempt turned the webhook off. */
const DISABLED = /; webhook disabled (?:\(410 Gone\)|after (\d+) consecutive failures)$/;

/** An attempt's outcome for the deliveries list: null when it was delivered. */
export function deliveryErrorText(raw: string | null): string | null {
  if (raw === null) return null;
  const off = DISABLED.exec(raw);
  const cause = off ? raw.slice(0, off.index) : raw;
  const rule = DELIVERY_ERRORS.find(([re]) => re.test(cause));
  const text = rule ? rule[1](cause.match(rule[0])!) : cause.replace(/^target refused: /, "");
  if (!off) return text;
  return `${text}; the webhook was turned off ${off[1] ? `after ${off[1]} failed deliveries in a row` : "because the receiver says it is gone"} (saving the webhook turns it back on)`;
}
