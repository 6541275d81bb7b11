import { AppError, ValidationFailed, type FieldProblem } from "../../http/errors";
import { html, raw, type Html } from "../../web/html";
import { refusalMessage } from "../../web/refusal";

/** A posted form as Elysia parses it: a field sent more than once arrives as an array. */
export type FormBody = Record<string, string | string[] | undefined>;

/** A form whose fields are each sent once. */
export type TextFields = Record<string, string | undefined>;

/** The posted fields; a post without a body has none. */
export const formFields = (body: unknown) => (body ?? {}) as FormBody;
export const textFields = (body: unknown) => (body ?? {}) as TextFields;

/** A field as text: its first value when sent more than once, "" when absent. */
export const firstValue = (v: string | string[] | undefined): string => (Array.isArray(v) ? v[0] : v) ?? "";

/** Each field of a posted form as text (its first value), for showing the form again. */
export function typedValues(body: unknown): TextFields {
  const out: TextFields = {};
  for (const [k, v] of Object.entries(formFields(body))) out[k] = firstValue(v);
  return out;
}

/**
 * A form as shown: what was typed, each field's message, and one for the whole form (a wrong
 * password, too many attempts). Passwords are never in `values` to begin with.
 */
export interface FormState {
  values: TextFields;
  errors: Record<string, string>;
  general: string | null;
}

export const freshForm = (values: TextFields = {}): FormState => ({ values, errors: {}, general: null });

/**
 * A refusal as the state of the form that caused it: a validation's messages go beside the
 * fields the form has, anything else (and a problem with a field the form does not show) on top.
 */
export function refusedForm(e: AppError, values: TextFields, fields: readonly string[]): FormState {
  const errors: Record<string, string> = {};
  const general: string[] = [];
  if (e instanceof ValidationFailed) {
    for (const p of fieldProblems(e)) {
      if (fields.includes(p.field)) errors[p.field] = errors[p.field] ? `${errors[p.field]} ${p.message}` : p.message;
      else general.push(p.message);
    }
  } else {
    general.push(refusalMessage(e));
  }
  return { values, errors, general: general.length ? general.join(" ") : null };
}

/** Field problems a refusal carries (a validation's), or none. */
export function fieldProblems(e: AppError): FieldProblem[] {
  return e instanceof ValidationFailed ? (e.details as FieldProblem[]) : [];
}

/**
 * The status a form shown again answers with: 422 for what was typed, 429 past a limit, 400 for
 * the rest; a server failure (5xx) is not the form's to show (page-errors.ts answers it).
 */
export function refusedStatus(e: AppError): number | null {
  if (e.status >= 500) return null;
  if (e.code === "rate_limited") return 429;
  return e.code === "validation_failed" ? 422 : 400;
}

/** The message for the whole form, at its top, read out when the page loads. */
export function formProblem(form: FormState): Html | "" {
  return form.general ? html`<div class="flash error" role="alert">${form.general}</div>` : "";
}

export interface FieldOptions {
  name: string;
  label: string;
  type?: "text" | "email" | "password" | "date" | "textarea" | "checkbox";
  /** Constant attributes (required, autocomplete, maxlength…): markup, never user input. */
  attrs?: string;
  /** Always shown under the field (a rule such as the password's). */
  hint?: string;
  /** Focused when the form has no problem to point at. */
  autofocus?: boolean;
}

/**
 * One field of a form shown again: its label, the value typed (never a password's), its hint,
 * and its message beside it, tied to the input by aria-describedby and aria-invalid. The first
 * field with a problem takes the focus. `form` names the form, so ids stay unique on a page
 * with several forms.
 */
export function field(form: string, state: FormState, o: FieldOptions): Html {
  const type = o.type ?? "text";
  const error = state.errors[o.name];
  const errorId = `${form}-${o.name}-error`;
  const hintId = `${form}-${o.name}-hint`;
  const described = [error ? errorId : "", o.hint ? hintId : ""].filter(Boolean).join(" ");
  const firstProblem = Object.keys(state.errors)[0];
  const focus = firstProblem ? firstProblem === o.name : !state.general && o.autofocus;
  const attrs = raw(
    [o.attrs ?? "", error ? 'aria-invalid="true"' : "", focus ? "autofocus" : ""]
      .filter(Boolean)
      .map((a) => ` ${a}`)
      .join(""),
  );
  const describedBy = described ? html` aria-describedby="${described}"` : "";
  const value = state.values[o.name] ?? "";
  const after = html`${o.hint ? html`<p class="field-hint muted small" id="${hintId}">${o.hint}</p>` : ""}${error ? html`<p class="field-error" id="${errorId}">${error}</p>` : ""}`;
  if (type === "checkbox") {
    return html`<label class="check"><input type="checkbox" name="${o.name}" value="yes"${value === "yes" ? raw(" checked") : ""}${attrs}${describedBy}> ${o.label}</label>${after}`;
  }
  if (type === "textarea") {
    return html`<label><span>${o.label}</span><textarea name="${o.name}"${attrs}${describedBy}>${value}</textarea></label>${after}`;
  }
  const shown = type === "password" ? "" : html` value="${value}"`;
  return html`<label><span>${o.label}</span><input type="${type}" name="${o.name}"${shown}${attrs}${describedBy}></label>${after}`;
}
