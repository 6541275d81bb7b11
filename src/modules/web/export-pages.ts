import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { iso } from "../../lib/clock";
import { html, page, type Html } from "../../web/html";
import { back, bytes, csrfField, layout, when } from "../../web/layout";
import { pageMacros, type RefusalPage } from "../../web/macros";
import type { WebSession } from "../../web/session";
import { publicOrigin } from "../../http/origin";
import { exportFile, recentExports, requestExport } from "../export/service";
import { distinct } from "./settings-forms";

const exportGone: RefusalPage = (_, { s }) =>
  page(layout({ title: "Not found", session: s, body: html`<div class="card"><h1>Not found</h1><p>This export does not exist or its link has expired. <a href="/settings">Request a new one</a>.</p></div>` }), 404);

/** The account page's export card: the button, and the latest exports (cards on a phone), each ready one with its download. */
export async function exportCard(deps: Deps, s: WebSession): Promise<Html> {
  const rows = await recentExports(deps, s.workspaceId, 5);
  const now = deps.clock.now();
  const names = distinct(
    rows.map((e) => `Download the export requested ${iso(e.createdAt).replace("T", " ").slice(0, 16)} UTC`),
    rows.map((e) => e.id),
  );
  return html`<div class="card"><h2>Export everything</h2><p class="small">A zip of every note, in folders, with a manifest. We mail you a link that works for 24 hours. Two an hour.</p>
  <form method="post" action="/settings/export">${csrfField(s)}<button>Request an export</button></form>
  ${
    rows.length
      ? html`<table class="cards exports mt10"><thead><tr><th>Requested</th><th>Status</th><th><span class="sr-only">Download</span></th></tr></thead><tbody>${rows.map((e, i) => {
          const live = e.status === "ready" && (e.expiresAt ?? 0) > now;
          return html`<tr><td data-label="Requested">${when(iso(e.createdAt))}</td><td data-label="Status">${live ? "ready" : e.status === "ready" ? "expired" : e.status}</td><td data-label="">${
            live ? html`<a href="/exports/${e.id}/download" aria-label="${names[i]!} (${bytes(e.sizeBytes)})">Download (${bytes(e.sizeBytes)})</a>` : ""
          }</td></tr>`;
        })}</tbody></table>`
      : ""
  }
</div>`;
}

/**
 * Asking for an export (answered with a redirect, so a reload asks for nothing; the zip is mailed
 * when ready) and downloading it; the account page shows exportCard().
 */
export const exportPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .post(
      "/settings/export",
      async ({ s, request }) => {
        await requestExport({ ctx: s.ctx, origin: publicOrigin(deps, request) });
        return back("/settings", "ok", "We're building your export and will mail you the link.");
      },
      { session: "form", refused: "/settings" },
    )
    .get(
      "/exports/:id/download",
      ({ s, params }) => exportFile({ ctx: s.ctx, id: params.id }),
      { session: "page", refused: exportGone },
    );
