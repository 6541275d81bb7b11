import { Elysia } from "elysia";
import { send } from "../../http/reply";
import { listHeaders } from "../../http/list";
import type { AnyAuth } from "../../http/plugins/auth";
import { pageFrom } from "../../lib/pagination";
import { Deleted } from "../notes/model";
import { FolderBody, FolderIdParams, FolderRecord, ListFoldersQuery } from "./model";
import * as folders from "./service";
import { t } from "elysia";

const detail = (summary: string) => ({ detail: { tags: ["folders"], summary } });

export const foldersRoutes = (auth: AnyAuth) =>
  new Elysia()
    .use(auth)
    .get(
      "/folders",
      ({ ctx, query, request, set }) => {
        const page = pageFrom(query);
        const { items, total } = folders.listFolders({ ctx, page });
        Object.assign(set.headers, listHeaders(request, ctx.deps.config.baseUrl, page, total));
        return items;
      },
      { query: ListFoldersQuery, response: { 200: t.Array(FolderRecord) }, ...detail("List folders by name") },
    )
    .post("/folders", async ({ ctx, body }) => send(await folders.createFolder({ ctx, name: body.folder.name })), {
      body: FolderBody,
      response: { 201: FolderRecord },
      ...detail("Create a folder"),
    })
    .patch("/folders/:id", async ({ ctx, params, body }) => send(await folders.renameFolder({ ctx, id: params.id, name: body.folder.name })), {
      params: FolderIdParams,
      body: FolderBody,
      response: { 200: FolderRecord },
      ...detail("Rename a folder"),
    })
    .delete("/folders/:id", async ({ ctx, params }) => send(await folders.deleteFolder({ ctx, id: params.id })), {
      params: FolderIdParams,
      response: { 200: Deleted },
      ...detail("Delete a folder; its notes stay, unfiled"),
    });
