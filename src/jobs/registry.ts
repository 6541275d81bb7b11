import { inboxHandler, INBOX_QUEUE } from "../modules/inbox/service";
import { webhookHandler, WEBHOOK_QUEUE } from "../modules/webhooks/service";
import type { JobHandler } from "./runner";
import { mailHandler, MAIL_QUEUE } from "../mail/queue";
import { exportHandler, EXPORT_QUEUE } from "../modules/export/service";

/** Queue name → handler. */
export const jobHandlers: Record<string, JobHandler> = {
  [WEBHOOK_QUEUE]: webhookHandler,
  [INBOX_QUEUE]: inboxHandler,
  [MAIL_QUEUE]: mailHandler,
  [EXPORT_QUEUE]: exportHandler,
};
