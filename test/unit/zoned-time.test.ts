import { describe, expect, test } from "bun:test";
import { fromWallTime, inZone, wallTimeText } from "../../src/lib/zoned-time";

describe("wall-clock times in a zone", () => {
  test("a time typed for Berlin in winter and in summer is read with that day's offset", () => {
    expect(new Date(fromWallTime("2026-11-28T03:00", "Europe/Berlin")!).toISOString()).toBe("2026-11-28T02:00:00.000Z");
    expect(new Date(fromWallTime("2026-07-01T12:00", "Europe/Berlin")!).toISOString()).toBe("2026-07-01T10:00:00.000Z");
  });

  test("far from UTC, across midnight: 09:00 in Kiritimati (UTC+14) is the day before in UTC", () => {
    expect(new Date(fromWallTime("2026-11-28T09:00", "Pacific/Kiritimati")!).toISOString()).toBe("2026-11-27T19:00:00.000Z");
  });

  test("a time skipped by spring-forward is read with the offset before it; a repeated one is its first occurrence", () => {
    expect(new Date(fromWallTime("2026-03-29T02:30", "Europe/Berlin")!).toISOString()).toBe("2026-03-29T01:30:00.000Z");
    expect(new Date(fromWallTime("2026-10-25T02:30", "Europe/Berlin")!).toISOString()).toBe("2026-10-25T00:30:00.000Z");
  });

  test("text that is no time is null, not a guess", () => {
    for (const t of ["", "tomorrow", "2026-02-30T01:00", "2026-11-28T24:00", "2026-11-28 03:00"]) expect(fromWallTime(t, "UTC")).toBeNull();
  });

  test("a moment said in a zone, and as a datetime-local value, round-trips", () => {
    const at = Date.parse("2026-11-30T02:05:00Z");
    expect(inZone(at, "Europe/Berlin")).toBe("Mon, 30 Nov 2026, 03:05 CET");
    expect(wallTimeText(at, "Europe/Berlin")).toBe("2026-11-30T03:05");
    expect(fromWallTime(wallTimeText(at, "America/New_York"), "America/New_York")).toBe(at);
  });
});
