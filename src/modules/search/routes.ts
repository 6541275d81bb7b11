import { Elysia } from "elysia";
import { listAnswer } from "../../http/list";
import type { AnyAuth } from "../../http/plugins/auth";
import { SearchHitList, SearchQuery } from "./model";
import { searchNotes } from "./service";

export const searchRoutes = (auth: AnyAuth) =>
  new Elysia().use(auth).get(
    "/search",
    ({ ctx, query, request, set }) =>
      listAnswer({ request, query, set, baseUrl: ctx.deps.config.baseUrl }, (page) => searchNotes({ ctx, q: query.q, folderId: query.folder_id, page })),
    {
      query: SearchQuery,
      response: { 200: SearchHitList },
      detail: {
        tags: ["search"],
        summary: "Full-text search of titles and text, best match first; a pinned token searches its note only",
      },
    },
  );
