import { ValidationFailed } from "../../../http/errors";
import type { NoteRow } from "../../notes/repo";
import { assertTemplate } from "./compile";

/** A PATCH's `inbox_template`: streams only; null or "" removes it; a syntax error is 422 with its position. */
export function inboxTemplateChanges(note: NoteRow, input: { inbox_template?: string | null }): Partial<NoteRow> {
  const t = input.inbox_template;
  if (t === undefined) return {};
  if (note.kind !== "stream") throw ValidationFailed.field("note.inbox_template", "not_a_stream", "an inbox template belongs to streams (append-only notes)");
  if (t === null || t === "") return { inboxTemplate: null };
  assertTemplate(t, "note.inbox_template");
  return { inboxTemplate: t };
}
