import { Elysia } from "elysia";
import { listAnswer } from "../../http/list";
import type { AnyAuth } from "../../http/plugins/auth";
import { SearchHitList, SearchQuery } from "./model";
import { SEARCH_CANDIDATES } from "./engine";
import { RANKED_WORD_ROWS } from "./sqlite";
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
        description:
          `Ranks at most the ${SEARCH_CANDIDATES.toLocaleString("en-US")} newest matching texts of each kind (stream lines as appended, ` +
          "notes' titles and bodies): a word found more often finds the notes of its newest matches (on SQLite, a word in more than " +
          `${RANKED_WORD_ROWS.toLocaleString("en-US")} texts of the whole index lists them most recently changed first). X-Total-Count is ` +
          `how many notes those matches are in: exact while at most ${SEARCH_CANDIDATES.toLocaleString("en-US")} texts of each kind match, ` +
          "otherwise a lower bound. Another word or folder_id narrows the search to older matches",
      },
    },
  );
