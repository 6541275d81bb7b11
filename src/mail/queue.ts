import { Type } from "@sinclair/typebox";
import type { Deps } from "../deps";
import { defineQueue } from "../jobs/define-queue";
import type { MailMessage } from "./mailer";

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
});

/** Queues a mail inside the caller's write: it is sent (and retried) only if the write commits. */
export function enqueueMail(deps: Deps, message: MailMessage): void {
  mailQueue.enqueue(deps, message);
}
