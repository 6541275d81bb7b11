/** Addresses and ranges for the outbound-webhook guard, on ipaddr.js. No DNS here. */
import ipaddr from "ipaddr.js";

export type Ip = ipaddr.IPv4 | ipaddr.IPv6;
/** A range: its base address and prefix length. */
export type Cidr = [Ip, number];

/**
 * A dotted-decimal IPv4 or an IPv6 address (brackets allowed); null for anything else. Shorthand,
 * octal and hex IPv4 (`127.1`, `0177.0.0.1`) are not addresses here: hostnames come already
 * normalised by the URL parser, and an allow-list entry that reads two ways is better refused.
 */
export function parseIp(text: string): Ip | null {
  const s = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (ipaddr.IPv4.isValidFourPartDecimal(s)) return ipaddr.IPv4.parse(s);
  if (s.includes(".") && !ipaddr.IPv4.isValidFourPartDecimal(s.slice(s.lastIndexOf(":") + 1))) return null;
  // ipaddr.js reads the deprecated `::a.b.c.d` as IPv4-mapped; it is IPv4-compatible (::/96).
  const v6 = /^::\d+\.\d+\.\d+\.\d+$/.test(s) ? `::0:${s.slice(2)}` : s;
  return ipaddr.IPv6.isValid(v6) ? ipaddr.IPv6.parse(v6) : null;
}

export function ipFamily(ip: Ip): 4 | 6 {
  return ip instanceof ipaddr.IPv4 ? 4 : 6;
}

/** `192.168.1.0/24`, `fd00::/8`, or a bare address as a range of one. */
export function parseCidr(text: string): Cidr {
  const [addr = "", bits, ...rest] = text.trim().split("/");
  const ip = parseIp(addr);
  if (!ip || rest.length > 0) throw new Error(`not an IP range: "${text}"`);
  const max = ipFamily(ip) === 4 ? 32 : 128;
  const length = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
  if (!(length >= 0 && length <= max)) throw new Error(`bad prefix length in "${text}"`);
  return [ip, length];
}

/** Never across families: an IPv4 range does not cover its IPv4-mapped IPv6 spellings. */
export function inCidr(ip: Ip, [base, bits]: Cidr): boolean {
  return ipFamily(ip) === ipFamily(base) && ip.match(base, bits);
}

// IANA hands out global unicast only inside 2000::/3. Outside it lie the IPv4-compatible ::/96
// (which ipaddr.js calls "unicast", and which some stacks route to the IPv4 inside), the mapped
// and translated ::ffff:0:0/96 and ::ffff:0:0:0/96, ULA, link-local and the rest.
const GLOBAL_UNICAST = parseCidr("2000::/3");
const NAT64_WELL_KNOWN = parseCidr("64:ff9b::/96");

/**
 * True for an address on the public internet; `allow` opens chosen ranges (homelab targets, tests).
 * IPv4 must be in none of ipaddr.js's special ranges (private, loopback, link-local with the
 * 169.254.169.254 metadata service, CGNAT, multicast, reserved, documentation and the rest).
 * IPv6 must be global unicast and in none of its special ranges either, which refuses whole the
 * forms that carry an IPv4 we cannot vouch for: Teredo 2001::/32 (the path runs through relays),
 * 6to4 2002::/16 (deprecated; a host with a 6to4 interface tunnels straight to the embedded IPv4,
 * so 2002:7f00:1:: is loopback) and local-use NAT64 64:ff9b:1::/48 (its operator chooses where the
 * IPv4 sits). The well-known NAT64 prefix 64:ff9b::/96 is the one exception, see below.
 */
export function isPublicAddress(ip: Ip, allow: readonly Cidr[] = []): boolean {
  if (allow.some((c) => inCidr(ip, c))) return true;
  if (ip instanceof ipaddr.IPv4) return ip.range() === "unicast";
  // DNS64 on an IPv6-only host answers 64:ff9b::a.b.c.d for IPv4-only names and the gateway then
  // connects to a.b.c.d, in the last 32 bits by RFC 6052: exactly as public as that IPv4.
  if (inCidr(ip, NAT64_WELL_KNOWN)) return isPublicAddress(new ipaddr.IPv4(ip.toByteArray().slice(12)));
  return inCidr(ip, GLOBAL_UNICAST) && ip.range() === "unicast";
}

/** Dotted IPv4, or IPv6 with every group written out (`0:0:0:0:0:0:0:1`). */
export function formatIp(ip: Ip): string {
  return ip.toNormalizedString();
}
