import { queueRegistry } from "./jobs/define-queue";
import { mailQueue } from "./mail/queue";
import { accountDeletionQueue } from "./modules/accounts/deletion";
import { channelDelivery } from "./modules/channels/delivery";
import { notifyLines } from "./modules/channels/lines";
import { exportQueue } from "./modules/export/service";
import { inboxQueue } from "./modules/inbox/queue";
import { webhookDelivery } from "./modules/webhooks/delivery";

/** Every job queue of the service: queue name → handler, for the job runner. */
export const jobHandlers = queueRegistry([webhookDelivery, channelDelivery, notifyLines, inboxQueue, mailQueue, exportQueue, accountDeletionQueue]);
