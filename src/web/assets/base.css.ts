/** The stylesheet every page shares: colours, layout, forms, tables. */
export const BASE_CSS = `
:root{--bg:#f7f7f5;--panel:#fff;--ink:#1d1d1f;--muted:#6b6b70;--line:#e4e4e0;--accent:#2f5bd3;--accent-ink:#fff;--danger:#b42318;--ok:#1a7f37;--warn:#8a5c00;--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;--radius:10px;color-scheme:light}
/* Dark when the system is dark and no light theme was chosen, or when dark was chosen (theme.js.ts). Every text colour holds 4.5:1 on --bg and --panel. */
@media (prefers-color-scheme:dark){:root:not([data-theme=light]){--bg:#16171a;--panel:#1e1f23;--ink:#ececec;--muted:#a1a1aa;--line:#34353c;--accent:#7aa2ff;--accent-ink:#0b1020;--danger:#ff7b72;--ok:#3fb950;--warn:#d29922;color-scheme:dark}}
:root[data-theme=dark]{--bg:#16171a;--panel:#1e1f23;--ink:#ececec;--muted:#a1a1aa;--line:#34353c;--accent:#7aa2ff;--accent-ink:#0b1020;--danger:#ff7b72;--ok:#3fb950;--warn:#d29922;color-scheme:dark}
*{box-sizing:border-box}html,body{margin:0}body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--ink)}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
header.top{display:flex;align-items:center;gap:16px;padding:10px 20px;background:var(--panel);border-bottom:1px solid var(--line);position:sticky;top:0;z-index:5}
header.top .brand{font-weight:700;letter-spacing:-.02em;color:var(--ink);font-size:17px}header.top nav{display:flex;gap:14px;flex:1}header.top nav a{color:var(--muted)}header.top nav a.on{color:var(--ink);font-weight:600}
header.top form{margin:0}.who{color:var(--muted);font-size:13px}
main{max-width:1180px;margin:0 auto;padding:24px 20px}
.shell{display:grid;grid-template-columns:230px 1fr;gap:24px}@media (max-width:760px){.shell{grid-template-columns:1fr}header.top{flex-wrap:wrap}}
aside.side{background:var(--panel);border:1px solid var(--line);border-radius:var(--radius);padding:14px;align-self:start}
aside.side h3{margin:0 0 8px;font-size:12px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted)}
aside.side ul{list-style:none;margin:0 0 12px;padding:0}aside.side li a{display:flex;justify-content:space-between;padding:5px 8px;border-radius:6px;color:var(--ink)}aside.side li a.on{background:var(--bg);font-weight:600}aside.side li a span{color:var(--muted);font-size:12px}
.card{background:var(--panel);border:1px solid var(--line);border-radius:var(--radius);padding:18px 20px;margin-bottom:18px}
.card h2{margin:0 0 12px;font-size:17px}h1{font-size:22px;margin:0 0 16px;letter-spacing:-.01em}
.row{display:flex;gap:10px;align-items:center;flex-wrap:wrap}.spread{justify-content:space-between}
.row input[type=text],.row input[type=search],.row input[type=email],.row input[type=url]{flex:1;width:auto;min-width:120px}.row select{width:auto;min-width:150px}.row form{margin:0}
input[type=text],input[type=email],input[type=password],input[type=date],input[type=datetime-local],input[type=url],input[type=number],input[type=search],select,textarea{font:inherit;color:inherit;background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:8px 10px;width:100%}
textarea{min-height:320px;font-family:var(--mono);font-size:14px;resize:vertical}
label{display:block;margin:0 0 12px}label>span{display:block;font-size:13px;color:var(--muted);margin-bottom:4px}label.check{display:flex;gap:8px;align-items:center}label.check input{width:auto}
button,.button{font:inherit;border:1px solid var(--line);background:var(--panel);color:var(--ink);border-radius:8px;padding:7px 14px;cursor:pointer;display:inline-block}
button.primary,.button.primary{background:var(--accent);border-color:var(--accent);color:var(--accent-ink)}button.danger{color:var(--danger)}button.link{border:0;background:none;color:var(--accent);padding:0}
.notes{list-style:none;margin:0;padding:0}.notes li{border-bottom:1px solid var(--line)}.notes li:last-child{border:0}
.notes a{display:grid;grid-template-columns:1fr auto;gap:4px 12px;padding:10px 4px;color:var(--ink)}.notes a:hover{background:var(--bg);text-decoration:none}
.notes .meta{color:var(--muted);font-size:12px}.badge{font-size:11px;border:1px solid var(--line);border-radius:999px;padding:1px 8px;color:var(--muted);margin-left:6px}
.badge.ok{color:var(--ok);border-color:currentColor}.badge.late,.badge.disabled,.badge.full{color:var(--danger);border-color:currentColor}
pre.stream{font-family:var(--mono);font-size:13px;background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:12px;max-height:60vh;overflow:auto;white-space:pre-wrap;word-break:break-word;margin:0}
.flash{padding:10px 14px;border-radius:8px;margin-bottom:16px;border:1px solid var(--line);background:var(--panel)}.flash.error{border-color:var(--danger);color:var(--danger)}.flash.ok{border-color:var(--ok);color:var(--ok)}
.narrow{max-width:420px;margin:40px auto}.muted{color:var(--muted)}.small{font-size:13px}code,.mono{font-family:var(--mono);font-size:13px}
table{width:100%;border-collapse:collapse;font-size:14px}th,td{text-align:left;padding:7px 6px;border-bottom:1px solid var(--line);vertical-align:top}th{color:var(--muted);font-weight:500;font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.secret{display:flex;gap:8px}.secret input{font-family:var(--mono)}.pager{display:flex;gap:12px;justify-content:center;margin-top:12px}
.editor{min-height:320px;border:1px solid var(--line);border-radius:8px;padding:12px;background:var(--bg)}.toolbar{display:flex;gap:6px;margin-bottom:8px}.toolbar button{padding:3px 10px}
progress.meter{display:block;width:100%;height:6px;border:0;border-radius:3px;overflow:hidden;margin-top:4px;background:var(--bg);color:var(--accent);appearance:none;-webkit-appearance:none}
progress.meter::-webkit-progress-bar{background:var(--bg)}progress.meter::-webkit-progress-value{background:var(--accent)}progress.meter::-moz-progress-bar{background:var(--accent)}
.mt8{margin-top:8px}.mt10{margin-top:10px}.mb10{margin-bottom:10px}.mb12{margin-bottom:12px}.mb14{margin-bottom:14px}.gap{height:12px}.grow{flex:1}textarea.bio{min-height:90px;font-family:inherit}
.status{font-size:12px;color:var(--muted)}
`;
