import { expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OutboxMailer } from "../../src/mail/mailer";

test("mails written to the outbox within one millisecond list by name in the order they were sent", async () => {
  const dir = mkdtempSync(join(tmpdir(), "notestream-outbox-"));
  const mailer = new OutboxMailer(dir, "notestream@example.com");
  for (let i = 0; i < 40; i++) await mailer.send({ to: "a@example.com", subject: `mail ${i}`, text: "." });
  const order = readdirSync(dir)
    .sort()
    .map((f) => Number(/^Subject: mail (\d+)$/m.exec(readFileSync(join(dir, f), "utf8"))![1]));
  expect(order).toEqual(Array.from({ length: 40 }, (_, i) => i));
  rmSync(dir, { recursive: true });
});
