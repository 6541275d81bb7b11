import { inboxHandler, INBOX_QUEUE } from "../modules/inbox/service";
import { webhookHandler, WEBHOOK_QUEUE } from "../modules/webhooks/service";
import type { JobHandler } from "./runner";

/** Queue name → handler. */
export const jobHandlers: Record<string, JobHandler> = {
  [WEBHOOK_QUEUE]: webhookHandler,
  [INBOX_QUEUE]: inboxHandler,
};
