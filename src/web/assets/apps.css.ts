/**
 * Connected apps (/settings/apps). Wide: a table, the revoke button's word kept whole. Below
 * 600 px each app is a block of labelled lines (the labels come from the cells' data-label), since
 * six columns squeezed to a phone's width break every word.
 */
export const APPS_CSS = `
table.apps td:last-child button{white-space:nowrap}
@media (max-width:600px){
  table.apps,table.apps tbody,table.apps tr,table.apps td{display:block}
  table.apps tr:first-child{display:none}
  table.apps tr{padding:10px 0;border-bottom:1px solid var(--line)}
  table.apps td{border:0;padding:2px 0}
  table.apps td[data-label]::before{content:attr(data-label) ": ";color:var(--muted);font-size:12px}
  table.apps td:last-child{padding-top:8px}
}
`;
