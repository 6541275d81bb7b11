import { AppError, ValidationFailed } from "../../http/errors";
import { html, raw, type Html } from "../../web/html";
import type { FormBody } from "./form";

/**
 * A refused form shown again in place: what was typed, and what is wrong, beside the field it is
 * about (or above the form, for what concerns it as a whole). The settings pages (tokens, a
 * stream's webhook, inbox, retention and alert) render from this after a refusal instead of
 * redirecting with a message, so nothing typed is lost.
 */
export interface FormState {
  /** Which form of the page was posted. */
  form: string;
  values: FormBody;
  /** Field name → message; WHOLE_FORM for the form as a whole. */
  errors: Record<string, string>;
}

export const WHOLE_FORM = "";

export function formState(form: string, body: unknown, errors: Record<string, string>): FormState {
  const { _csrf, ...values } = (body ?? {}) as FormBody;
  return { form, values, errors };
}

const posted = (state: FormState | undefined, form: string): state is FormState => state?.form === form;

/** The value to show in a field: what was typed, when this form was just refused, else the stored one. */
export function typed(state: FormState | undefined, form: string, field: string, stored: string): string {
  if (!posted(state, form)) return stored;
  const v = state.values[field];
  return (Array.isArray(v) ? v[0] : v) ?? "";
}

/** Whether a checkbox or option is on: as posted when this form was just refused, else as stored. */
export function chosen(state: FormState | undefined, form: string, field: string, value: string, stored: boolean): boolean {
  if (!posted(state, form)) return stored;
  return ([] as string[]).concat(state.values[field] ?? []).includes(value);
}

const messageId = (form: string, field: string) => `${form}-${field || "form"}-error`;

/** The message about one field, if any. */
export function problemOf(state: FormState | undefined, form: string, field: string): string | undefined {
  return posted(state, form) ? state.errors[field] : undefined;
}

/** `aria-invalid` and `aria-describedby` for a field with a problem, so its message is read with it. */
export function invalid(state: FormState | undefined, form: string, field: string): Html {
  return problemOf(state, form, field) ? raw(` aria-invalid="true" aria-describedby="${messageId(form, field)}"`) : raw("");
}

/** Points a group (a fieldset of checkboxes) at its message; the boxes themselves carry aria-invalid. */
export function describedBy(state: FormState | undefined, form: string, field: string): Html {
  return problemOf(state, form, field) ? raw(` aria-describedby="${messageId(form, field)}"`) : raw("");
}

/** The message beside a field (inside its label, after the input). */
export function fieldProblem(state: FormState | undefined, form: string, field: string): Html | "" {
  const message = problemOf(state, form, field);
  return message ? html`<span class="field-error" id="${messageId(form, field)}">${message}</span>` : "";
}

/** The message about the form as a whole, shown above it. */
export function formProblem(state: FormState | undefined, form: string): Html | "" {
  const message = problemOf(state, form, WHOLE_FORM);
  return message ? html`<div class="flash error" role="alert" id="${messageId(form, WHOLE_FORM)}">${message}</div>` : "";
}

/** The code of a problem found by a form's own check (refuseFields), as opposed to a service's. */
export const FORM_FIELD = "form_field";

/** A form's own check: each problem names a field of the form and is already worded for people. */
export function refuseFields(problems: Record<string, string | null | undefined | false>): void {
  const found = Object.entries(problems).filter((p): p is [string, string] => typeof p[1] === "string");
  if (found.length) throw new ValidationFailed(found.map(([field, message]) => ({ field, code: FORM_FIELD, message })));
}

/** A service's message ("the dev plan allows 3 …") as a sentence on a page. */
export function sentence(message: string): string {
  const s = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(s) ? s : `${s}.`;
}

/**
 * The status of a page that shows a refused form again: 422 when a field was wrong, else the
 * refusal's own (403 for a plan, 429 for a limit); its headers (Retry-After) go along.
 */
export function refusedStatus(state: FormState, e: AppError): number {
  return Object.keys(state.errors).some((k) => k !== WHOLE_FORM) ? 422 : e.status;
}

/** Row labels made unique, for the accessible names of each row's buttons: a repeated label gets its row's key. */
export function distinct(labels: string[], keys: string[]): string[] {
  const seen = new Map<string, number>();
  for (const l of labels) seen.set(l, (seen.get(l) ?? 0) + 1);
  return labels.map((l, i) => ((seen.get(l) ?? 0) > 1 ? `${l} (${keys[i]})` : l));
}
