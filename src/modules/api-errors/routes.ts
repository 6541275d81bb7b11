import { Elysia, t } from "elysia";
import { listAnswer, PageQuery } from "../../http/list";
import type { AnyAuth } from "../../http/plugins/auth";
import { listApiErrors } from "./service";

const ApiErrorRecord = t.Object({
  at: t.String({ format: "date-time" }),
  method: t.String(),
  path: t.String(),
  status: t.Integer(),
  code: t.String(),
  token_id: t.Nullable(t.String()),
}, { $id: "#/components/schemas/ApiError" });

export const apiErrorsRoutes = (auth: AnyAuth) =>
  new Elysia().use(auth).get(
    "/errors",
    ({ ctx, query, request, set }) => listAnswer({ request, query, set, baseUrl: ctx.deps.config.baseUrl }, (page) => listApiErrors({ ctx, page })),
    {
      query: t.Object(PageQuery),
      response: { 200: t.Array(ApiErrorRecord) },
      detail: { tags: ["account"], summary: "This workspace's recent 4xx answers, newest first" },
    },
  );
