import { and, eq } from "drizzle-orm";
import type { Ctx, Deps } from "../../deps";
import { notes } from "../../db/tables";
import { commit } from "../../http/commit";
import { Conflict, ValidationFailed } from "../../http/errors";
import type { Reply } from "../../http/reply";
import type { NoteRecord } from "../notes/model";
import { readBody, toRecord, visibleNote, type NoteRow } from "../notes/repo";
import { requireScope } from "../tokens/service";
import { ackLinkTarget } from "./ack-links";
import { alerting } from "./spell";

/**
 * Acknowledges the spell a stream is in (inside a write): no more repeats or escalation in it;
 * the next spell starts unacknowledged. Acknowledging twice keeps the first time.
 */
export async function acknowledgeSpell(deps: Deps, note: NoteRow): Promise<NoteRow> {
  if (!alerting(note.deadmanStatus)) {
    throw new Conflict(`"${note.filename ?? note.title}" is ${note.deadmanStatus === "off" ? "not watched" : note.deadmanStatus === "paused" ? "paused" : "on time"}: there is no late or failing spell to acknowledge`);
  }
  if (note.acknowledgedAt !== null) return note;
  const changes = { acknowledgedAt: deps.clock.now(), nextAlertAt: null };
  // The spell's start in the condition: one that ended (and another began) since the read is not acknowledged.
  await deps.db
    .update(notes)
    .set(changes)
    .where(and(eq(notes.id, note.id), eq(notes.spellStartedAt, note.spellStartedAt!)));
  return { ...note, ...changes };
}

/** POST /notes/{id}/ack. */
export async function ackStream({ ctx, id }: { ctx: Ctx; id: string }): Promise<Reply<NoteRecord>> {
  requireScope(ctx, "write");
  return commit(ctx, 200, async () => {
    const note = await visibleNote(ctx, id, { lock: true });
    if (note.kind !== "stream") throw ValidationFailed.field("id", "not_a_stream", "only a stream (append-only note) has alerts to acknowledge");
    const next = await acknowledgeSpell(ctx.deps, note);
    return toRecord(ctx, next, await readBody(ctx.deps, next));
  });
}

/** What an alert mail's acknowledge link finds: its stream, and whether its spell is still open to acknowledge. */
export interface AckLinkState {
  name: string;
  status: NoteRow["deadmanStatus"];
  since: number;
  /** open: on and unacknowledged; acknowledged: by this request; already: before it; ended: the spell is over. */
  state: "open" | "acknowledged" | "already" | "ended";
  acknowledgedAt: number | null;
}

function stateOf(note: NoteRow, spellStartedAt: number): AckLinkState {
  const current = alerting(note.deadmanStatus) && Number(note.spellStartedAt) === spellStartedAt;
  return {
    name: note.filename ?? note.title,
    status: note.deadmanStatus,
    since: spellStartedAt,
    state: !current ? "ended" : note.acknowledgedAt !== null ? "already" : "open",
    acknowledgedAt: current && note.acknowledgedAt !== null ? Number(note.acknowledgedAt) : null,
  };
}

/** GET /ack/{token}: reads only (mail scanners and link previews follow links); null for an unknown link. */
export async function readAckLink(deps: Deps, token: string): Promise<AckLinkState | null> {
  const target = await ackLinkTarget(deps, token);
  return target && stateOf(target.note, target.spellStartedAt);
}

/** POST /ack/{token}: acknowledges the spell the mail was about, if it is still the stream's spell. */
export function useAckLink(deps: Deps, token: string): Promise<AckLinkState | null> {
  return deps.writer.write(async () => {
    const target = await ackLinkTarget(deps, token);
    if (!target) return null;
    const state = stateOf(target.note, target.spellStartedAt);
    if (state.state !== "open") return state;
    const acked = await acknowledgeSpell(deps, target.note);
    return { ...state, state: "acknowledged" as const, acknowledgedAt: acked.acknowledgedAt };
  });
}
