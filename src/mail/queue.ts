import { Type } from "@sinclair/typebox";
import type { Deps } from "../deps";
import { logEvent } from "../http/log";
import { defineQueue } from "../jobs/define-queue";
import { iso } from "../lib/clock";
import { domainOf, type MailMessage } from "./mailer";

/** The stored payload is the message itself (jobs queued by earlier versions have the same fields). */
export const MailJob = Type.Object({ to: Type.String(), subject: Type.String(), text: Type.String() });

export const mailQueue = defineQueue("mail", MailJob, {
  run: async (deps, message) => {
    try {
      await deps.mailer.send(message);
      return { ok: true };
    } catch (e) {
      return { retry: `mail not sent: ${(e as Error).message}` };
    }
  },
  // A failed send is logged with the recipient's domain only: the address is personal data, and
  // the domain is what tells a bad relay, a refusing provider or a typo apart.
  settled: (deps, message, job, s) => {
    if (s.status === "done") return deps.metrics.mails.sent.inc();
    deps.metrics.mails.failed.inc();
    const fields = { to_domain: domainOf(message.to), attempt: job.attempts, error: withoutAddresses(s.error) };
    if (s.status === "retry") logEvent("warn", "mail failed, will retry", { ...fields, next_attempt_at: iso(s.runAt) });
    else logEvent("error", "mail failed for good", fields);
  },
});

/** SMTP errors quote the recipients ("550 <ann@example.com>: unknown user"): their local parts go. */
export function withoutAddresses(text: string): string {
  return text.replace(/[^\s<>"'(),;:@\[\]]+@(?=[A-Za-z0-9.-]+)/g, "*@");
}

/** Queues a mail inside the caller's write: it is sent (and retried) only if the write commits. */
export async function enqueueMail(deps: Deps, message: MailMessage): Promise<void> {
  await mailQueue.enqueue(deps, message);
}
