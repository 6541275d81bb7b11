import type { Ctx } from "../../deps";
import { commit } from "../../http/commit";
import type { Reply } from "../../http/reply";
import { AppError, ValidationFailed } from "../../http/errors";
import { mailOrigin } from "../../http/origin";
import { iso } from "../../lib/clock";
import { enqueueMail } from "../../mail/queue";
import { deadmanAlert } from "../../mail/templates";
import { visibleNote } from "../notes/repo";
import { requireScope } from "../tokens/service";
import { getWorkspace, tierOf } from "../workspaces/repo";
import { lastLines } from "./alert-lines";
import { scheduleOf } from "./schedule";

/**
 * "Send a test alert": the dead-man alert a stream would send now, marked as a test in its
 * subject and first lines, mailed to `to` (the signed-in account's address) through the mail
 * queue like a real one. The stream's state is left alone: it is not marked late, and the real
 * alert still comes when the deadline passes.
 */
export async function sendTestAlert({ ctx, noteId, to }: { ctx: Ctx; noteId: string; to: string }): Promise<Reply<{ to: string }>> {
  requireScope(ctx, "write");
  const { deps } = ctx;
  return commit(ctx, 202, async () => {
    const note = await visibleNote(ctx, noteId);
    if (note.kind !== "stream") throw ValidationFailed.field("id", "not_a_stream", "the dead-man's switch belongs to streams (append-only notes)");
    const tier = tierOf(deps, await getWorkspace(deps, note.workspaceId));
    if (!tier.deadman) throw new AppError("plan_required", `the dead-man's switch is not available on the ${tier.name} plan`);
    if (note.expectedIntervalSeconds === null && note.schedule === null) {
      throw ValidationFailed.field("note.expected_interval_seconds", "not_set", "set the expected interval first: the alert tells it");
    }
    const now = deps.clock.now();
    const alert = deadmanAlert({
      to,
      noteTitle: note.title,
      filename: note.filename,
      noteId: note.id,
      lastWriteAt: iso(note.lastWriteAt),
      silentForMs: now - note.lastWriteAt,
      intervalSeconds: note.expectedIntervalSeconds,
      schedule: scheduleOf(note),
      lastLines: await lastLines(deps, note.id),
      baseUrl: mailOrigin(deps),
    });
    const name = note.filename ?? note.title;
    await enqueueMail(deps, {
      to,
      subject: alert.subject.replace(/^\[notestream\] /, "[notestream] [test] "),
      text: [
        `This is a test of the alert for "${name}", sent from its settings page: nothing has gone quiet.`,
        `A real alert goes to ${note.alertEmail ?? "the workspace owner's address"} and reads like this:`,
        "",
        "----",
        alert.text,
      ].join("\n"),
    });
    return { to };
  });
}
