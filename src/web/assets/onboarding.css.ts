/**
 * The onboarding (the two choices, the snippets to paste, the first line arriving live) and the
 * account page's plan table. "Waiting" and "arrived" swap on whether the followed stream shows a
 * line yet, so the stream's own script (stream.js.ts) is all the page needs.
 */
export const ONBOARDING_CSS = `
.onboarding{max-width:640px;margin:24px auto}
.choices{display:grid;gap:12px;margin:14px 0}
button.choice{display:block;width:100%;text-align:left;padding:14px 16px;border-radius:var(--radius)}
button.choice:hover,button.choice:focus-visible{border-color:var(--accent)}
button.choice strong{display:block;font-size:16px}button.choice span{display:block;color:var(--muted);font-size:14px;margin-top:4px}
.snippet{margin-bottom:14px}.snippet .row{align-items:flex-start}
textarea.snippet-text{min-height:0;font-size:13px;white-space:pre;overflow:auto}
.first-line:has(.ln) .waiting{display:none}.first-line:not(:has(.ln)) .arrived{display:none}
.first-line .arrived{color:var(--ok)}
table.plans .current{font-weight:600}table.plans form{margin:0}
.plan-actions{margin-top:12px}
`;
