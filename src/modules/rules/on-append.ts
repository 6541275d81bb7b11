import { and, eq, gt } from "drizzle-orm";
import type { Deps } from "../../deps";
import { alertLog } from "../../db/tables";
import { logEvent } from "../../http/log";
import { mailOrigin } from "../../http/origin";
import { iso } from "../../lib/clock";
import type { Tier } from "../../limits/plans";
import { domainOf } from "../../mail/mailer";
import { enqueueMail } from "../../mail/queue";
import { ruleMatched } from "../../mail/templates";
import { raiseAlert } from "../channels/alerts";
import { heldUntil } from "../deadman/quiet";
import { recipient } from "../deadman/recipient";
import type { NoteRow } from "../notes/repo";
import type { AppendHook } from "../streams/append/hooks";
import { compiledRules, verdictOf, type Verdict } from "./matcher";

/** A burst of matching lines is one mail, not a burst of mails: at most one rule alert per stream in this long. */
const RULE_ALERT_GAP_MS = 60_000;

/**
 * A stream's rules on each appended line (API, batches, `notestream append`, inbox lines). Listed
 * first in runtime.ts AFTER_APPEND: a fail or ok a rule finds becomes the append's signal, which
 * the hooks after it (the dead-man's switch) act on, unless the append sent its own status. A
 * stream without rules costs one null check; one with rules a cache lookup and the tries.
 */
export const rulesOnAppend: AppendHook = {
  appended(deps, a) {
    if (a.note.rules === null) return undefined;
    const verdict = verdictOf(compiledRules(a.note.rules), a.line);
    if (verdict === undefined) return undefined;
    a.signal ??= verdict.signal;
    return verdict.alert === undefined ? undefined : ruleAlert(deps, a.note, a.tier, verdict.alert, a.at);
  },
};

/**
 * An alert rule matched: it goes out on plans with the dead-man's switch, unless the stream is
 * paused, quiet or in a maintenance window (a held rule alert is dropped, not owed), or a rule
 * alert went out within the last minute. The alert log's row (raiseAlert) is the minute's mark;
 * the stream's row is locked by the append (PostgreSQL), so two instances never both send.
 */
async function ruleAlert(deps: Deps, note: NoteRow, tier: Tier, hit: NonNullable<Verdict["alert"]>, now: number): Promise<void> {
  if (!tier.deadman || note.deadmanStatus === "paused" || heldUntil(note, now) !== null) return;
  const [recent] = await deps.db
    .select({ at: alertLog.at })
    .from(alertLog)
    .where(and(eq(alertLog.noteId, note.id), eq(alertLog.kind, "rule"), gt(alertLog.at, now - RULE_ALERT_GAP_MS)))
    .limit(1);
  if (recent === undefined) await sendRuleAlert(deps, note, hit, now);
}

/**
 * The one place a rule's alert goes out: a mail to the stream's recipient, and raiseAlert (the
 * alert log, the webhook when alert_webhook is on, the channels of its notify list).
 */
async function sendRuleAlert(deps: Deps, note: NoteRow, hit: NonNullable<Verdict["alert"]>, now: number): Promise<void> {
  const name = note.filename ?? note.title;
  const to = await recipient(deps, note);
  const rule = hit.rule.regex ? `/${hit.rule.match}/` : JSON.stringify(hit.rule.match);
  await enqueueMail(deps, ruleMatched({ to, noteTitle: note.title, filename: note.filename, noteId: note.id, at: iso(now), line: hit.line, rule, baseUrl: mailOrigin(deps) }));
  await raiseAlert(deps, note, { kind: "rule", title: `${name}: a line matched a rule`, text: `RULE: a line of ${name} matched ${rule}: ${hit.line}` }, now);
  deps.writer.afterCommit(() => logEvent("warn", "rule alert sent", { note_id: note.id, to_domain: domainOf(to) }));
}
