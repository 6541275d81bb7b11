// The rules card's form (rules-view.ts): saves the rows through the notes service, or shows the
// page again with each refusal beside its row (refusedOn).
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { ValidationFailed } from "../../http/errors";
import { redirectWithFlash } from "../../web/flash";
import { pageMacros } from "../../web/macros";
import { updateNote } from "../notes/service";
import { MAX_MATCH_CHARS, MAX_RULES, type RuleInput } from "../rules/rules";
import { fieldProblems, firstValue, formFields } from "./form";
import { postedRows, RULES_FORM } from "./rules-view";
import { refuseFields, WHOLE_FORM } from "./settings-forms";
import { refusedOn, settingsPath } from "./stream-settings-pages";

/** What the service refused, said beside the row's field it is about. */
function problemsOnRows(e: ValidationFailed, rowOf: number[]): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const p of fieldProblems(e)) {
    const m = /^note\.rules\[(\d+)\]\.(match|then)$/.exec(p.field);
    const at = m ? `${m[2]}_${rowOf[Number(m[1])]}` : WHOLE_FORM;
    if (p.code === "invalid_regex") errors[at] = `Not a regular expression RE2 accepts: ${p.message}.`;
    else if (p.code === "out_of_range") errors[at] = `Enter 1 to ${MAX_MATCH_CHARS} characters.`;
    else if (p.code === "too_many") errors[at] = `A stream has at most ${MAX_RULES} rules.`;
    else if (m?.[2] === "then") errors[at] = "Choose what the rule does.";
    else errors[at] = p.message;
  }
  return errors;
}

/** The rules form: rows with text kept in order, those marked for removal and empty ones left out. */
export const rulesPages = (deps: Deps) =>
  new Elysia().use(pageMacros(deps)).post(
    "/notes/:id/rules",
    async ({ s, params, body }) => {
      const b = formFields(body);
      const rules: RuleInput[] = [];
      const rowOf: number[] = [];
      for (const i of postedRows(b)) {
        const match = firstValue(b[`match_${i}`]);
        if (match === "" || firstValue(b[`remove_${i}`]) === "yes") continue;
        rules.push({ match, regex: firstValue(b[`regex_${i}`]) === "yes", case_sensitive: firstValue(b[`case_${i}`]) === "yes", then: firstValue(b[`then_${i}`]) });
        rowOf.push(i);
      }
      try {
        await updateNote({ ctx: s.ctx, id: params.id, input: { rules } });
      } catch (e) {
        if (e instanceof ValidationFailed) refuseFields(problemsOnRows(e, rowOf));
        throw e;
      }
      return redirectWithFlash(deps, s, settingsPath(params.id), { ok: rules.length ? "Rules saved: they apply to the next line." : "No rules now." });
    },
    { session: "form", refused: refusedOn(deps, RULES_FORM) },
  );
