import { Elysia } from "elysia";
import { send } from "../../http/reply";
import { listAnswer } from "../../http/list";
import type { AnyAuth } from "../../http/plugins/auth";
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
      ({ ctx, query, request, set }) => listAnswer({ request, query, set, baseUrl: ctx.deps.config.baseUrl }, (page) => folders.listFolders({ ctx, page })),
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
