import { expect, test } from "bun:test";
import { Cron } from "croner";
import { scheduledDeadline } from "../../src/modules/deadman/schedule";

// scheduledDeadline remembers a schedule's next run for the writes before it; whatever order the
// writes come in (a batch's streams share one schedule, a clock set back), it must answer what a
// fresh croner computes, across daylight-saving nights too.
test("a scheduled deadline from the remembered next run equals croner's own, for writes in any order", () => {
  const schedules = [
    { schedule: "30 2 * * *", timezone: "Europe/Berlin" },
    { schedule: "0 3 * * 1-5", timezone: "Europe/Berlin" },
    { schedule: "*/15 * * * *", timezone: "Pacific/Auckland" },
    { schedule: "0 0 * * *", timezone: "Asia/Kolkata" },
    { schedule: "45 */2 * * * *", timezone: "UTC" },
  ];
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  // Around both of Berlin's 2026 transitions: 29 March and 25 October.
  const starts = [Date.UTC(2026, 2, 28, 12), Date.UTC(2026, 9, 24, 12)];
  for (const s of schedules) {
    const fresh = new Cron(s.schedule, { timezone: s.timezone, paused: true });
    for (const start of starts) {
      let at = start;
      for (let i = 0; i < 400; i++) {
        // Mostly forward by up to 20 minutes, sometimes back by up to an hour, sometimes onto a whole second.
        const r = random();
        at += r < 0.8 ? Math.floor(random() * 1_200_000) : -Math.floor(random() * 3_600_000);
        if (random() < 0.2) at = Math.floor(at / 1000) * 1000;
        const expected = fresh.nextRun(new Date(at))!.getTime() + 60_000;
        expect(scheduledDeadline({ ...s, graceSeconds: 60 }, at)).toBe(expected);
      }
    }
  }
});
