/**
 * The header's tools (workspace switcher, theme toggle), what assistive technology needs (a skip
 * link, visible focus, screen-reader-only labels), and narrow screens: nothing wider than a
 * 390 px phone, the folder sidebar after the content, and `table.cards`, whose rows become cards
 * below 600 px, each cell with its `data-label` above its value.
 */
export const LAYOUT_CSS = `
[hidden]{display:none!important}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
.skip{position:absolute;left:8px;top:-60px;z-index:10;background:var(--panel);color:var(--accent);border:1px solid var(--line);border-radius:8px;padding:8px 12px}.skip:focus{top:8px}
:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
header.top .tools{display:flex;align-items:center;gap:12px;min-width:0}
.switcher{display:flex;gap:6px;align-items:center;margin:0}.switcher select{width:auto;max-width:14em;padding:4px 8px}.switcher button{padding:4px 10px}
.theme-toggle{padding:4px 10px;font-size:13px;white-space:nowrap}.theme-toggle::before{content:"\\263E  " / ""}.theme-toggle[aria-pressed=true]{background:var(--accent);border-color:var(--accent);color:var(--accent-ink)}
.who{max-width:16em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
main{overflow-wrap:break-word}
main p a:not(.button),.flash a,label a{text-decoration:underline;text-underline-offset:2px}
code,.mono,pre,td,.secret input{overflow-wrap:anywhere}
pre{max-width:100%;overflow:auto}
.shell{grid-template-columns:230px minmax(0,1fr)}.shell>*{min-width:0}
.secret{flex-wrap:wrap}.secret input{flex:1 1 14em;min-width:0;width:auto}
.toolbar{flex-wrap:wrap}.toolbar button{white-space:nowrap}
.editor{overflow-wrap:anywhere}.editor img{max-width:100%}
@media (max-width:760px){
  header.top{position:static;flex-wrap:wrap;gap:8px;padding:8px 12px}
  header.top .tools{display:contents}
  header.top .brand{margin-right:auto}header.top .button{padding:4px 10px}
  header.top nav{order:4;flex:1 1 100%;overflow-x:auto}header.top nav:empty{display:none}
  .switcher{order:3;flex:1 1 100%}
  .who{display:none}
  main{padding:16px 12px}
  .shell{grid-template-columns:minmax(0,1fr);gap:16px}
  .shell>aside.side{order:2}
  .card{padding:14px}
}
@media (max-width:600px){
  .theme-toggle .theme-label{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}.theme-toggle::before{content:"\\263E" / "";font-size:15px}
  table.cards,table.cards tbody,table.cards tr,table.cards td{display:block;width:100%}
  table.cards thead,table.cards tr:not(:has(td)){display:none}
  table.cards tr{border:1px solid var(--line);border-radius:8px;padding:6px 12px;margin-bottom:10px}
  table.cards td{border:0;padding:4px 0}
  table.cards td[data-label]:not([data-label=""])::before{content:attr(data-label);display:block;font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
}
`;
