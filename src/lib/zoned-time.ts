/**
 * Wall-clock time in an IANA zone, both ways, with the runtime's Intl only: a stream's schedule
 * runs in its own zone, so its page says times in that zone, and a time typed into a form
 * (`<input type="datetime-local">`, which carries no zone) is read in it.
 */

const formats = new Map<string, Intl.DateTimeFormat>();

function partsFormat(zone: string): Intl.DateTimeFormat {
  let f = formats.get(zone);
  if (f === undefined) {
    if (formats.size >= 200) formats.clear();
    f = new Intl.DateTimeFormat("en-US", { timeZone: zone, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric" });
    formats.set(zone, f);
  }
  return f;
}

/** The wall-clock time `at` shows in `zone`, read as if it were UTC: its difference from `at` is the zone's offset then. */
function wallAsUtc(at: number, zone: string): number {
  const p: Record<string, number> = {};
  for (const part of partsFormat(zone).formatToParts(new Date(at))) if (part.type !== "literal") p[part.type] = Number(part.value);
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!) + (at % 1000 + 1000) % 1000;
}

/**
 * The moment a wall-clock time `YYYY-MM-DDTHH:MM` (what a datetime-local input sends) names in
 * `zone`, or null for text that is no such time. A time skipped by a daylight-saving change is
 * read with the offset before it (02:30 on a spring-forward night is 03:30); a repeated one is
 * its first occurrence.
 */
export function fromWallTime(text: string, zone: string): number | null {
  const m = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d))?$/.exec(text.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map((v) => Number(v ?? 0)) as [number, number, number, number, number, number];
  const guess = Date.UTC(y, mo - 1, d, h, mi, s);
  const check = new Date(guess);
  if (check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return null;
  // The zone's offsets a day either side: a daylight-saving change in between makes them differ.
  const offset = (t: number) => wallAsUtc(t, zone) - t;
  const earlier = guess - offset(guess - 86_400_000);
  const later = guess - offset(guess + 86_400_000);
  const real = [earlier, later].filter((t) => wallAsUtc(t, zone) === guess);
  return real.length ? Math.min(...real) : earlier;
}

/** `YYYY-MM-DDTHH:MM` of `at` in `zone`: the value a datetime-local input shows for it. */
export function wallTimeText(at: number, zone: string): string {
  return new Date(wallAsUtc(at, zone)).toISOString().slice(0, 16);
}

/** "Mon, 30 Nov 2026, 03:05 CET": a moment as people in `zone` read it. */
export function inZone(at: number, zone: string): string {
  return new Intl.DateTimeFormat("en-GB", { timeZone: zone, weekday: "short", day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZoneName: "short" }).format(new Date(at));
}
