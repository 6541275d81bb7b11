// A stream's rules on its settings page: the card that lists them as editable rows. Its form's
// route is in rules-pages.ts.
import { html, raw, type Html } from "../../web/html";
import { csrfField } from "../../web/layout";
import type { WebSession } from "../../web/session";
import type { NoteRow } from "../notes/repo";
import { MAX_MATCH_CHARS, MAX_RULES, rulesOf } from "../rules/rules";
import type { FormBody } from "./form";
import { chosen, fieldProblem, formProblem, invalid, typed, type FormState } from "./settings-forms";

export const RULES_FORM = "rules";
const ACTIONS = [
  ["fail", "fail (as status fail)"],
  ["ok", "ok (as status ok)"],
  ["alert", "alert (mail the line)"],
] as const;

/** The row numbers a posted form holds (match_0, match_1, …), in order. */
export function postedRows(values: FormBody): number[] {
  return Object.keys(values)
    .flatMap((k) => /^match_(\d+)$/.exec(k)?.[1] ?? [])
    .map(Number)
    .filter((i) => i < MAX_RULES + 1)
    .sort((a, b) => a - b);
}

/** The rules as the card lists them, editable in place, with one empty row to add one. */
export function rulesCard(s: WebSession, note: NoteRow, state: FormState | undefined): Html {
  const stored = rulesOf(note);
  const rows = state?.form === RULES_FORM ? postedRows(state.values) : [...stored.keys(), ...(stored.length < MAX_RULES ? [stored.length] : [])];
  const row = (i: number) => {
    const r = stored[i];
    const then = typed(state, RULES_FORM, `then_${i}`, r?.then ?? "alert");
    return html`<tr><td data-label="Match"><input name="match_${i}" maxlength="${MAX_MATCH_CHARS}" value="${typed(state, RULES_FORM, `match_${i}`, r?.match ?? "")}" aria-label="Rule ${i + 1}: what a line contains"${invalid(state, RULES_FORM, `match_${i}`)}>${fieldProblem(state, RULES_FORM, `match_${i}`)}</td>
    <td data-label="Regex"><label class="check"><input type="checkbox" name="regex_${i}" value="yes" ${chosen(state, RULES_FORM, `regex_${i}`, "yes", r?.regex ?? false) ? raw("checked") : ""}> regular expression</label></td>
    <td data-label="Case"><label class="check"><input type="checkbox" name="case_${i}" value="yes" ${chosen(state, RULES_FORM, `case_${i}`, "yes", r?.case_sensitive ?? false) ? raw("checked") : ""}> case-sensitive</label></td>
    <td data-label="Then"><select name="then_${i}" aria-label="Rule ${i + 1}: then"${invalid(state, RULES_FORM, `then_${i}`)}>${ACTIONS.map(([v, label]) => html`<option value="${v}" ${v === then ? raw("selected") : ""}>${label}</option>`)}</select>${fieldProblem(state, RULES_FORM, `then_${i}`)}</td>
    <td data-label="Remove">${r ? html`<label class="check"><input type="checkbox" name="remove_${i}" value="yes" ${chosen(state, RULES_FORM, `remove_${i}`, "yes", false) ? raw("checked") : ""}> remove</label>` : ""}</td></tr>`;
  };
  return html`<div class="card"><h2>Rules on lines ${stored.length ? html`<span class="badge ok">${stored.length}</span>` : ""}</h2>
  <p class="small">Each line written here (appends and inbox lines) is tried against the rules in order, and the first that matches acts: fail and ok as an append's status would (a status sent with the append wins), alert mails the line to the alert address, at most once a minute, never while paused or quiet. Text matches anywhere in the line; a regular expression is RE2's (no backreferences or lookaround). Up to ${MAX_RULES} rules; the last row adds one.</p>
  ${formProblem(state, RULES_FORM)}
  <form method="post" action="/notes/${note.id}/rules">${csrfField(s)}
    <table class="cards rules"><thead><tr><th>Match</th><th>Regex</th><th>Case</th><th>Then</th><th>Remove</th></tr></thead><tbody>${rows.map(row)}</tbody></table>
    <div class="row"><button class="primary">Save rules</button></div>
  </form>
</div>`;
}
