/**
 * The notes list's status board: filter pills with counts, and rows whose cells carry their own
 * small label (no header row to lose on a phone). Wide: one line per note in fixed columns;
 * below 600 px the cells wrap two to a line under the title, a stream's fill last and full width. The fill is a <meter>: its low/high
 * marks colour it, so no inline width is needed (the pages' policy forbids inline style).
 */
export const BOARD_CSS = `
.filters{display:flex;flex-wrap:wrap;gap:6px;margin:0 0 12px}
.filters a{border:1px solid var(--line);border-radius:999px;padding:3px 12px;color:var(--ink);background:var(--panel);font-size:14px;white-space:nowrap}
.filters a:hover{text-decoration:none;border-color:var(--muted)}
.filters a.on{background:var(--ink);border-color:var(--ink);color:var(--panel)}
.filters .count{color:var(--muted);margin-left:2px;font-size:12px}.filters .count.alert{color:var(--danger);font-weight:600}.filters a.on .count{color:inherit}
.notes.board li.brow{display:grid;grid-template-columns:minmax(0,1fr) 8em 11em 7.5em 6.5em 4em;gap:6px 14px;align-items:center;padding:10px 4px}
.notes.board li.brow a.b-title{display:block;padding:0;min-width:0}.notes.board li.brow a.b-title:hover{background:none;text-decoration:underline}
.notes.board .b-title strong,.notes.board .b-title .meta{display:block;overflow-wrap:anywhere}
.b-cell{font-size:13px;min-width:0}.b-label{display:block;font-size:11px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.b-cell .badge{margin-left:0;display:inline-block;white-space:nowrap}.b-cell .badge+.badge{margin-left:4px}.badge.paused{border-color:currentColor;border-style:dashed}.badge.quiet{color:var(--accent);border-color:currentColor;border-style:dashed}.badge.acknowledged{color:var(--ink);border-color:var(--muted)}.badge.failing{color:var(--danger);border-color:currentColor}.badge.on{color:var(--accent);border-color:currentColor}
meter.fill{display:block;width:100%;height:8px;margin:3px 0 2px}
meter.fill::-webkit-meter-bar{background:var(--bg);border:1px solid var(--line);border-radius:4px;height:8px}
meter.fill::-webkit-meter-optimum-value{background:var(--ok);border-radius:3px}
meter.fill::-webkit-meter-suboptimum-value{background:var(--warn);border-radius:3px}
meter.fill::-webkit-meter-even-less-good-value{background:var(--danger);border-radius:3px}
@media (max-width:600px){
  .notes.board li.brow{grid-template-columns:repeat(2,minmax(0,1fr));gap:8px 12px}
  .notes.board li.brow .b-title,.notes.board li.brow .b-fill{grid-column:1/-1}
  .notes.board li.brow.stream .b-fill{order:1}
}
`;
