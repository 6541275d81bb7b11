/** Forms shown again after a refusal: each field's message beside it, the field marked; the account's danger zone. */
export const FORMS_CSS = `
.field-hint,.field-error{margin:-6px 0 12px}.field-error{color:var(--danger);font-size:13px}
input[aria-invalid=true],textarea[aria-invalid=true],select[aria-invalid=true]{border-color:var(--danger)}
.card.danger-zone{border-color:var(--danger)}.card.danger-zone h2{color:var(--danger)}.button.danger{color:var(--danger)}
.error-page{max-width:560px;margin:40px auto}
`;
