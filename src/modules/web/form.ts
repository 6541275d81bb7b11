/** A posted form as Elysia parses it: a field sent more than once arrives as an array. */
export type FormBody = Record<string, string | string[] | undefined>;

/** A form whose fields are each sent once. */
export type TextFields = Record<string, string | undefined>;

/** The posted fields; a post without a body has none. */
export const formFields = (body: unknown) => (body ?? {}) as FormBody;
export const textFields = (body: unknown) => (body ?? {}) as TextFields;

/** A field as text: its first value when sent more than once, "" when absent. */
export const firstValue = (v: string | string[] | undefined): string => (Array.isArray(v) ? v[0] : v) ?? "";
