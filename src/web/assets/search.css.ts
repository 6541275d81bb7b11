/**
 * The search page: each hit's snippet under its title across the row, its matched words marked.
 * <mark> keeps the text colour and takes a tint of the accent, so it holds its contrast in both
 * themes.
 */
export const SEARCH_CSS = `
.search-form{margin:0 0 12px}.search-problem{color:var(--danger);font-size:13px;margin:6px 0 0}
.notes.hits .snippet{grid-column:1/-1;margin:2px 0 0;font-size:13px;color:var(--muted);overflow-wrap:anywhere}
.notes.hits mark{background:color-mix(in srgb,var(--accent) 22%,transparent);color:var(--ink);border-radius:3px;padding:0 2px;font-weight:600}
`;
