import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { html, page } from "../../web/html";
import { back, layout } from "../../web/layout";
import { pageMacros, type RefusalPage } from "../../web/macros";
import { publicOrigin } from "../../http/origin";
import { exportFile, requestExport } from "../export/service";

const exportGone: RefusalPage = (_, { s }) =>
  page(layout({ title: "Not found", session: s, body: html`<div class="card"><h1>Not found</h1><p>This export does not exist or its link has expired. <a href="/settings">Request a new one</a>.</p></div>` }), 404);

/** Asking for an export (it is mailed when ready) and downloading it; the account page lists them. */
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
      ({ s, params }) => {
        const file = exportFile({ ctx: s.ctx, id: params.id });
        return new Response(Bun.file(file.path), { headers: { "content-type": "application/zip", "content-disposition": `attachment; filename="${file.name}"` } });
      },
      { session: "page", refused: exportGone },
    );
