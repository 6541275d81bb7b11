import type { Deps } from "../deps";
import { enqueue } from "../jobs/queue";
import type { JobHandler } from "../jobs/runner";
import type { MailMessage } from "./mailer";

export const MAIL_QUEUE = "mail";

/** Queues a mail inside the caller's write: it is sent (and retried) only if the write commits. */
export function enqueueMail(deps: Deps, message: MailMessage): void {
  enqueue(deps, MAIL_QUEUE, message);
}

export const mailHandler: JobHandler = {
  run: async (deps, job) => {
    try {
      await deps.mailer.send(JSON.parse(job.payload) as MailMessage);
      return { ok: true };
    } catch (e) {
      return { retry: `mail not sent: ${(e as Error).message}` };
    }
  },
};
