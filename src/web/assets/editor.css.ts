/** A note's page: save problems and the draft offer under the editors, a stream's times and live indicator, a version's preview, the new-note form. */
export const EDITOR_CSS = `
.save-problem,.draft-bar{display:flex;flex-wrap:wrap;gap:8px 12px;align-items:center;padding:10px 12px;border-radius:8px;border:1px solid var(--line);background:var(--panel);margin:8px 0;font-size:14px}
.save-problem{border-color:var(--danger)}.save-problem>span{color:var(--danger);flex:1 1 18em}.draft-bar{border-color:var(--warn)}.draft-bar>span{flex:1 1 18em}
.save-problem button,.draft-bar button{padding:4px 12px}.save-problem a{text-decoration:underline}
.field-label{display:block;font-size:13px;color:var(--muted);margin-bottom:4px}
.field-error{color:var(--danger);font-size:13px;margin:-6px 0 12px}input[aria-invalid=true]{border-color:var(--danger)}
fieldset{border:0;padding:0;margin:0 0 12px;min-width:0}legend{font-size:13px;color:var(--muted);margin-bottom:4px;padding:0}
.narrow-form{max-width:600px}.toolbar .numbered::before{content:"1. "}
pre.stream.times .ln::before{content:attr(data-t) "  ";color:var(--muted)}
.live{display:inline-flex;align-items:center;gap:6px;color:var(--muted)}.live::before{content:"";width:8px;height:8px;border-radius:50%;background:currentColor}.live.on{color:var(--ok)}.live.off{color:var(--danger)}
pre.version{font-family:var(--mono);font-size:14px;background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:12px;white-space:pre-wrap;word-break:break-word;margin:0;min-height:120px}
.editor.version{min-height:120px}
`;
