import { describe, expect, test } from "bun:test";
import { formatIp, inCidr, isPublicAddress, parseCidr, parseIp } from "../../src/lib/ip";

const ip = (s: string) => {
  const p = parseIp(s);
  if (!p) throw new Error(`unparsed ${s}`);
  return p;
};

describe("parseIp", () => {
  test("IPv4 and IPv6 forms", () => {
    expect(formatIp(ip("192.168.1.20"))).toBe("192.168.1.20");
    expect(formatIp(ip("::1"))).toBe("0:0:0:0:0:0:0:1");
    expect(formatIp(ip("[2001:db8::8:800:200c:417a]"))).toBe("2001:db8:0:0:8:800:200c:417a");
    expect(formatIp(ip("::ffff:127.0.0.1"))).toBe(formatIp(ip("::ffff:7f00:1")));
    for (const bad of ["", "1.2.3", "256.1.1.1", "1.2.3.4.5", "::1::2", "gggg::", "1:2:3:4:5:6:7:8:9", "example.com"]) {
      expect(parseIp(bad)).toBeNull();
    }
  });
  test("an IPv4-compatible address stays IPv4-compatible, not mapped", () => {
    expect(formatIp(ip("::127.0.0.1"))).toBe("0:0:0:0:0:0:7f00:1");
    expect(formatIp(ip("::127.0.0.1"))).toBe(formatIp(ip("[::7f00:1]")));
  });
  test("ambiguous IPv4 spellings are not addresses here: the URL parser has already normalised hostnames", () => {
    for (const bad of ["0177.0.0.1", "2130706433", "0x7f.0.0.1", "127.1", "010.0.0.1"]) expect(parseIp(bad)).toBeNull();
  });
});

describe("isPublicAddress", () => {
  test("refuses loopback, private, link-local, CGNAT, unspecified, multicast, metadata and mapped forms", () => {
    for (const s of [
      "127.0.0.1", "127.255.255.254", "10.0.0.1", "172.16.5.4", "192.168.0.1", "169.254.169.254", "100.64.0.1",
      "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "::ffff:127.0.0.1", "::ffff:8.8.8.8", "fe80::1",
      "fd00::1", "ff02::1", "64:ff9b::a00:1",
    ]) {
      expect(isPublicAddress(ip(s)), s).toBe(false);
    }
  });
  test("refuses IPv4-compatible and IPv4-translated IPv6, whatever IPv4 they carry", () => {
    for (const s of [
      "::127.0.0.1", "::7f00:1", "::a9fe:a9fe", "::8.8.8.8", "::ffff:0:127.0.0.1", "::ffff:0:7f00:1", "::ffff:0:808:808",
    ]) {
      expect(isPublicAddress(ip(s)), s).toBe(false);
    }
  });
  test("refuses Teredo, 6to4 and local-use NAT64 whole, and well-known NAT64 carrying a non-public IPv4", () => {
    for (const s of [
      "2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2002:7f00:1::1", "2002:808:808::1", "64:ff9b::7f00:1",
      "64:ff9b::a9fe:a9fe", "64:ff9b::0.0.0.0", "64:ff9b::ffff:ffff", "64:ff9b:1::808:808", "64:ff9b:1:7f00:1::",
    ]) {
      expect(isPublicAddress(ip(s)), s).toBe(false);
    }
  });
  test("refuses IPv6 outside global unicast, documentation, discard and benchmarking ranges", () => {
    for (const s of ["1::1", "::1:0:0:1", "100::1", "2001:db8::1", "2001:2::1", "4000::1", "3fff::1"]) {
      expect(isPublicAddress(ip(s)), s).toBe(false);
    }
  });
  test("accepts public addresses", () => {
    for (const s of ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "2a00:1450:4001::200e"]) {
      expect(isPublicAddress(ip(s)), s).toBe(true);
    }
  });
  test("accepts the well-known NAT64 prefix carrying a public IPv4, as DNS64 hands out on IPv6-only hosts", () => {
    expect(isPublicAddress(ip("64:ff9b::808:808"))).toBe(true);
    expect(isPublicAddress(ip("64:ff9b::8.8.8.8"))).toBe(true);
  });
  test("allowed ranges open chosen targets", () => {
    const allow = [parseCidr("127.0.0.0/8"), parseCidr("::1/128")];
    expect(isPublicAddress(ip("127.0.0.1"), allow)).toBe(true);
    expect(isPublicAddress(ip("::1"), allow)).toBe(true);
    expect(isPublicAddress(ip("10.0.0.1"), allow)).toBe(false);
    expect(inCidr(ip("192.168.7.9"), parseCidr("192.168.0.0/16"))).toBe(true);
    expect(() => parseCidr("10.0.0.0/33")).toThrow();
  });
  test("allowed ranges: IPv6 CIDRs, a bare address as a one-address range, no cross-family match", () => {
    expect(isPublicAddress(ip("fd12:3456::9"), [parseCidr("fd12:3456::/32")])).toBe(true);
    expect(isPublicAddress(ip("fd12:3457::9"), [parseCidr("fd12:3456::/32")])).toBe(false);
    expect(isPublicAddress(ip("192.168.1.7"), [parseCidr(" 192.168.1.7 ")])).toBe(true);
    expect(isPublicAddress(ip("192.168.1.8"), [parseCidr("192.168.1.7")])).toBe(false);
    expect(isPublicAddress(ip("::ffff:192.168.1.7"), [parseCidr("192.168.1.0/24")])).toBe(false);
    for (const bad of ["10/8", "0177.0.0.1/8", "::1/129", "10.0.0.0/-1", "10.0.0.0/8x", "example.com/24"]) {
      expect(() => parseCidr(bad), bad).toThrow();
    }
  });
});
