import { Elysia, t } from "elysia";
import { listHeaders, PageQuery } from "../../http/list";
import type { AnyAuth } from "../../http/plugins/auth";
import { pageFrom } from "../../lib/pagination";
import { listApiErrors } from "./service";

const ApiErrorRecord = t.Object({
  at: t.String({ format: "date-time" }),
  method: t.String(),
  path: t.String(),
  status: t.Integer(),
  code: t.String(),
  token_id: t.Nullable(t.String()),
});

export const errorsRoutes = (auth: AnyAuth) =>
  new Elysia().use(auth).get(
    "/errors",
    ({ ctx, query, request, set }) => {
      const page = pageFrom(query);
      const { items, total } = listApiErrors({ ctx, page });
      Object.assign(set.headers, listHeaders(request, ctx.deps.config.baseUrl, page, total));
      return items;
    },
    {
      query: t.Object(PageQuery),
      response: { 200: t.Array(ApiErrorRecord) },
      detail: { tags: ["account"], summary: "This workspace's recent 4xx answers, newest first" },
    },
  );
