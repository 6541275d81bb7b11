import { Elysia, t } from "elysia";
import type { AnyAuth } from "../../http/plugins/auth";
import { publicOrigin } from "../../http/origin";
import { send } from "../../http/reply";
import { exportFile, getExport, requestExport } from "./service";

const ExportRecord = t.Object({
  id: t.String({ description: "exp_…" }),
  status: t.Union([t.Literal("queued"), t.Literal("building"), t.Literal("ready"), t.Literal("failed"), t.Literal("expired")]),
  created_at: t.String({ format: "date-time" }),
  completed_at: t.Nullable(t.String({ format: "date-time" })),
  expires_at: t.Nullable(t.String({ format: "date-time", description: "24 hours after completion" })),
  notes: t.Nullable(t.Integer()),
  size_bytes: t.Nullable(t.Integer()),
  download_url: t.Nullable(t.String({ description: "Once ready, until it expires; needs a read token of the workspace" })),
  error: t.Nullable(t.String()),
}, { $id: "#/components/schemas/Export" });

const detail = (summary: string) => ({ detail: { tags: ["export"], summary } });

export const exportRoutes = (auth: AnyAuth) =>
  new Elysia()
    .use(auth)
    .post("/export", async ({ ctx, request }) => send(await requestExport({ ctx, origin: publicOrigin(ctx.deps, request) })), {
      response: { 202: ExportRecord },
      ...detail("Queue a full-account export (2 an hour); the download link is e-mailed when built"),
    })
    .get("/export/:id", ({ ctx, params, request }) => getExport({ ctx, id: params.id, origin: publicOrigin(ctx.deps, request) }), {
      params: t.Object({ id: t.String() }),
      response: { 200: ExportRecord },
      ...detail("An export's status, and its download_url once built"),
    })
    .get(
      "/export/:id/download",
      ({ ctx, params }) => exportFile({ ctx, id: params.id }),
      {
        params: t.Object({ id: t.String() }),
        response: { 200: t.File({ type: "application/zip" }) },
        ...detail("Download the zip (owner only, 24 hours)"),
      },
    );
