import { desc, eq } from "drizzle-orm";
import type { Ctx } from "../../deps";
import { inboxDeliveries } from "../../db/tables";
import { ValidationFailed } from "../../http/errors";
import { iso } from "../../lib/clock";
import { visibleNote, type NoteRow } from "../notes/repo";
import { requireScope } from "../tokens/service";
import { payloadSummary } from "./line";
import { inboxLine } from "./summarise";
import { assertTemplate } from "./template/compile";

const encoder = new TextEncoder();

/** A stream the caller sees, and may preview an inbox line of. */
async function previewedStream(ctx: Ctx, noteId: string): Promise<NoteRow> {
  const note = await visibleNote(ctx, noteId);
  if (note.kind !== "stream") throw ValidationFailed.field("id", "not_a_stream", "an inbox belongs to a stream (an append-only note)");
  return note;
}

/**
 * POST /notes/{id}/inbox/preview: the line a payload would become now, with `template` (checked
 * as a saved one is), else the stream's own, else the built-in summary. It writes nothing, so
 * the read scope is enough. A JSON string payload stands for a plain-text body.
 */
export async function previewInboxLine({ ctx, noteId, payload, template }: { ctx: Ctx; noteId: string; payload: unknown; template?: string }): Promise<{ line: string }> {
  requireScope(ctx, "read");
  // The schema's "any JSON" lets an absent key through.
  if (payload === undefined) throw ValidationFailed.field("payload", "missing", "payload is required: the JSON a sender would POST");
  if (template) assertTemplate(template, "template");
  const note = await previewedStream(ctx, noteId);
  const source = template === undefined ? note.inboxTemplate : template || null;
  const [contentType, raw] = typeof payload === "string" ? ["text/plain", encoder.encode(payload)] : ["application/json", encoder.encode(JSON.stringify(payload))];
  return { line: inboxLine(iso(ctx.deps.clock.now()), payloadSummary(source, contentType, {}, raw)) };
}

/**
 * The line the stream's last received payload makes with `template` (the settings page's
 * preview, for the stream it has already read): null when the inbox has received nothing it still keeps.
 */
export async function previewLastPayload({ ctx, note, template }: { ctx: Ctx; note: { id: string }; template: string | null }): Promise<{ received_at: string; line: string } | null> {
  requireScope(ctx, "read");
  if (template) assertTemplate(template, "template");
  const [d] = await ctx.deps.db
    .select({ receivedAt: inboxDeliveries.receivedAt, contentType: inboxDeliveries.contentType, headers: inboxDeliveries.headers, body: inboxDeliveries.body })
    .from(inboxDeliveries)
    .where(eq(inboxDeliveries.noteId, note.id))
    .orderBy(desc(inboxDeliveries.receivedAt), desc(inboxDeliveries.id))
    .limit(1);
  if (!d) return null;
  const receivedAt = iso(d.receivedAt);
  return { received_at: receivedAt, line: inboxLine(receivedAt, payloadSummary(template, d.contentType, JSON.parse(d.headers), d.body)) };
}
