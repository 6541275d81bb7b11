// The settings page's badge card: the badge as it looks now, and its URLs with a Markdown snippet
// shown once, when made. Its forms' routes are in watch-pages.ts.
import { html, raw, type Html } from "../../web/html";
import { csrfField } from "../../web/layout";
import { secretField } from "../../web/flash";
import type { WebSession } from "../../web/session";
import { badgeOf } from "../badges/service";
import { badgeSvg } from "../badges/svg";
import type { NoteRow } from "../notes/repo";
import { formProblem, type FormState } from "./settings-forms";

/** The flash kind that carries a new badge's image URL to the page, once. */
export const BADGE_FLASH = "badge-url";

/** The image URL's twin for shields.io's endpoint badge (badges/routes.ts serves both). */
export const jsonUrlOf = (svgUrl: string) => svgUrl.replace(/\.svg$/, ".json");

/** `![name](url)`, with the characters that would end Markdown's alt text or link taken out of the name. */
export function markdownSnippet(name: string, svgUrl: string): string {
  return `![${name.replace(/[[\]\\\n\r]/g, "")} status](${svgUrl})`;
}

function madeNow(name: string, svgUrl: string): Html {
  const shields = `https://img.shields.io/endpoint?url=${encodeURIComponent(jsonUrlOf(svgUrl))}`;
  return html`<div class="secret-card mt10" data-badge-made><h3>Copy it now</h3><p class="small">These URLs are shown only this once; anyone with them sees the stream's status (up, late, failing, paused or new), nothing of its lines.</p>
  <p class="small"><span>Markdown, for a README:</span></p>${secretField("badge-markdown", "Badge Markdown", markdownSnippet(name, svgUrl))}
  <p class="small mt8"><span>Image URL (SVG):</span></p>${secretField("badge-svg-url", "Badge image URL", svgUrl)}
  <p class="small mt8"><span>shields.io endpoint badge, in its own style:</span></p>${secretField("badge-shields-url", "shields.io badge URL", shields)}</div>`;
}

/** Create, rotate or turn off the stream's public status badge; `made` is a new badge's image URL, on the answer that made it. */
export function badgeCard(s: WebSession, note: NoteRow, state: FormState | undefined, made: string | null): Html {
  const on = note.badgeTokenHash !== null;
  const name = note.filename ?? note.title;
  return html`<div class="card" id="badge"><h2>Status badge ${on ? html`<span class="badge ok">on</span>` : ""}</h2>
  <p class="small">An image for a README or a wall screen, readable without signing in: up, late, failing, paused or new.</p>
  ${on ? html`<p class="badge-preview" data-badge-preview>${raw(badgeSvg(badgeOf(note)))}</p>` : ""}
  ${made ? madeNow(name, made) : ""}${formProblem(state, "badge")}
  <div class="row mt10"><form method="post" action="/notes/${note.id}/badge">${csrfField(s)}<button class="primary">${on ? "Rotate the badge URL" : "Create a badge URL"}</button></form>
  ${on ? html`<form method="post" action="/notes/${note.id}/badge/disable">${csrfField(s)}<button class="danger">Turn the badge off</button></form>` : ""}</div>
  ${on && !made ? html`<p class="muted small">The URL is shown once, when it is made; rotating makes a new one and the old one stops working at once.</p>` : ""}
</div>`;
}
