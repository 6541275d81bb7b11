import { Elysia } from "elysia";
import { send } from "../../http/reply";
import type { AnyAuth } from "../../http/plugins/auth";
import { FilenameParams, NoteIdParams } from "../notes/model";
import { AppendBody, AppendResponse } from "./model";
import * as streams from "./service";

const detail = (summary: string) => ({ detail: { tags: ["streams"], summary } });

export const streamsRoutes = (auth: AnyAuth) =>
  new Elysia()
    .use(auth)
    .post(
      "/notes/by-filename/:filename/append",
      async ({ ctx, params, body }) => send(await streams.appendByFilename({ ctx, filename: params.filename, text: body.text })),
      {
        params: FilenameParams,
        body: AppendBody,
        response: { 200: AppendResponse, 201: AppendResponse },
        ...detail("Append a line to a stream by filename; the first write creates it (201)"),
      },
    )
    .post(
      "/notes/:id/append",
      async ({ ctx, params, body }) => send(await streams.appendById({ ctx, id: params.id, text: body.text })),
      {
        params: NoteIdParams,
        body: AppendBody,
        response: { 200: AppendResponse },
        ...detail("Append a line to a stream by id"),
      },
    );
