/** IPv4 and IPv6 addresses as numbers, and CIDR ranges over them. No DNS here. */

export interface Ip {
  version: 4 | 6;
  value: bigint;
}

export interface Cidr {
  version: 4 | 6;
  base: bigint;
  bits: number;
}

/** Parses a canonical dotted IPv4 or an IPv6 address (brackets allowed); null when it is neither. */
export function parseIp(text: string): Ip | null {
  const s = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  const v4 = parseV4(s);
  if (v4 !== null) return { version: 4, value: v4 };
  const v6 = parseV6(s);
  return v6 === null ? null : { version: 6, value: v6 };
}

function parseV4(s: string): bigint | null {
  const parts = s.split(".");
  if (parts.length !== 4) return null;
  let v = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null;
    v = (v << 8n) | BigInt(Number(p));
  }
  return v;
}

function parseV6(s: string): bigint | null {
  if (!/^[0-9a-fA-F:.]+$/.test(s) || s.split("::").length > 2) return null;
  let tail = s;
  let v4Tail: bigint | null = null;
  const lastColon = s.lastIndexOf(":");
  if (s.slice(lastColon + 1).includes(".")) {
    v4Tail = parseV4(s.slice(lastColon + 1));
    if (v4Tail === null) return null;
    tail = s.slice(0, lastColon + 1) + "0:0";
  }
  const [head, rest] = tail.includes("::") ? tail.split("::") : [tail, null];
  const headGroups = head ? head.split(":") : [];
  const restGroups = rest === null ? [] : rest ? rest.split(":") : [];
  const missing = 8 - headGroups.length - restGroups.length;
  if (rest === null ? missing !== 0 : missing < 1) return null;
  const groups = [...headGroups, ...Array(rest === null ? 0 : missing).fill("0"), ...restGroups];
  let v = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    v = (v << 16n) | BigInt(parseInt(g, 16));
  }
  if (v4Tail !== null) v = (v & ~0xffffffffn) | v4Tail;
  return v;
}

export function parseCidr(text: string): Cidr {
  const [addr, bitsText] = text.trim().split("/");
  const ip = parseIp(addr ?? "");
  if (!ip) throw new Error(`not an IP range: "${text}"`);
  const max = ip.version === 4 ? 32 : 128;
  const bits = bitsText === undefined ? max : Number(bitsText);
  if (!Number.isInteger(bits) || bits < 0 || bits > max) throw new Error(`bad prefix length in "${text}"`);
  return { version: ip.version, base: ip.value, bits };
}

export function inCidr(ip: Ip, cidr: Cidr): boolean {
  if (ip.version !== cidr.version) return false;
  const width = BigInt(ip.version === 4 ? 32 : 128);
  const shift = width - BigInt(cidr.bits);
  return ip.value >> shift === cidr.base >> shift;
}

const NOT_PUBLIC = [
  // IPv4: this network, private, CGNAT, loopback, link-local (and the 169.254.169.254 metadata
  // service), IETF, documentation, benchmarking, multicast, reserved, broadcast.
  "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
  "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
  "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
  // IPv6: unspecified, loopback, IPv4-mapped and -translated, discard, documentation, 6to4,
  // unique-local, link-local, site-local, multicast.
  "::/128", "::1/128", "::ffff:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001:db8::/32",
  "2002::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
].map(parseCidr);

/** True for an address on the public internet; `allow` opens chosen ranges (homelab targets, tests). */
export function isPublicAddress(ip: Ip, allow: readonly Cidr[] = []): boolean {
  if (allow.some((c) => inCidr(ip, c))) return true;
  return !NOT_PUBLIC.some((c) => inCidr(ip, c));
}

export function formatIp(ip: Ip): string {
  if (ip.version === 4) return [24n, 16n, 8n, 0n].map((s) => String((ip.value >> s) & 0xffn)).join(".");
  const groups: string[] = [];
  for (let i = 7n; i >= 0n; i--) groups.push(((ip.value >> (i * 16n)) & 0xffffn).toString(16));
  return groups.join(":");
}
