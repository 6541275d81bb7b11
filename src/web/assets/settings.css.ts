/**
 * The settings forms (tokens, a stream's webhook, inbox and alert): a refused field's message
 * inside its label, under the field (forms.css.ts marks the field itself), a setting the plan
 * lacks shown disabled, a secret shown once, the words of a delivery's outcome, a badge's preview.
 */
export const SETTINGS_CSS = `
label>.field-error,fieldset.group .field-error{display:block;margin:4px 0 0;font-size:13px;color:var(--danger)}
fieldset.group{border:0;padding:0;margin:0 0 12px;min-width:0}fieldset.group legend{font-size:13px;color:var(--muted);padding:0;margin-bottom:4px}
fieldset.group[disabled] input,fieldset.group[disabled] select,fieldset.group[disabled] button{cursor:not-allowed}
.gate{border:1px dashed var(--line);border-radius:8px;padding:8px 12px}
.secret-card{border-color:var(--accent)}.secret{max-width:100%}
.ok-text{color:var(--ok)}.error-text{color:var(--danger)}
table.deliveries td{overflow-wrap:anywhere}
.badge-preview svg{display:block;max-width:100%;height:auto}table.windows td{overflow-wrap:anywhere}
#schedule code,#quiet code{overflow-wrap:anywhere}
ul.notify-list{list-style:none;padding:0;margin:0 0 12px}ul.notify-list>li{border:1px solid var(--line);border-radius:8px;padding:8px 12px;margin-bottom:10px}ul.notify-list h3{margin:0 0 8px}
#add-digest select,#notify select{max-width:100%}
table.channels tr.attention{border-color:var(--danger);border-width:2px}table.channels code,table.cards code{overflow-wrap:anywhere}
`;
