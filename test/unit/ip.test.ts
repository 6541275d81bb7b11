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
    expect(ip("::ffff:127.0.0.1").value).toBe(ip("::ffff:7f00:1").value);
    for (const bad of ["", "1.2.3", "256.1.1.1", "1.2.3.4.5", "::1::2", "gggg::", "1:2:3:4:5:6:7:8:9", "example.com"]) {
      expect(parseIp(bad)).toBeNull();
    }
  });
});

describe("isPublicAddress", () => {
  test("refuses loopback, private, link-local, CGNAT, unspecified, multicast, metadata and mapped forms", () => {
    for (const s of [
      "127.0.0.1", "127.255.255.254", "10.0.0.1", "172.16.5.4", "192.168.0.1", "169.254.169.254", "100.64.0.1",
      "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "::ffff:127.0.0.1", "::ffff:8.8.8.8", "fe80::1",
      "fd00::1", "ff02::1", "64:ff9b::a00:1",
    ]) {
      expect(isPublicAddress(ip(s))).toBe(false);
    }
  });
  test("accepts public addresses", () => {
    for (const s of ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "2a00:1450:4001::200e"]) {
      expect(isPublicAddress(ip(s))).toBe(true);
    }
  });
  test("allowed ranges open chosen targets", () => {
    const allow = [parseCidr("127.0.0.0/8"), parseCidr("::1/128")];
    expect(isPublicAddress(ip("127.0.0.1"), allow)).toBe(true);
    expect(isPublicAddress(ip("::1"), allow)).toBe(true);
    expect(isPublicAddress(ip("10.0.0.1"), allow)).toBe(false);
    expect(inCidr(ip("192.168.7.9"), parseCidr("192.168.0.0/16"))).toBe(true);
    expect(() => parseCidr("10.0.0.0/33")).toThrow();
  });
});
