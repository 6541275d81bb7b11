import { Elysia, t } from "elysia";
import { send } from "../../http/reply";
import { listAnswer, PageQuery } from "../../http/list";
import type { AnyAuth } from "../../http/plugins/auth";
import { BulkCreateBody, CreateNoteBody, Deleted, FilenameParams, ListNotesQuery, NoteIdParams, NoteList, NoteRecord, Purged, TrashList, UpdateNoteBody } from "./model";
import * as notes from "./service";
import { listTrash, purgeNote, restoreNote } from "./trash";
import { pauseStream } from "../deadman/pause";
import { ackStream } from "../deadman/ack";

const detail = (summary: string) => ({ detail: { tags: ["notes"], summary } });

export const notesRoutes = (auth: AnyAuth) =>
  new Elysia()
    .use(auth)
    .get(
      "/notes",
      ({ ctx, query, request, set }) =>
        listAnswer({ request, query, set, baseUrl: ctx.deps.config.baseUrl }, (page) =>
          notes.listNotes({ ctx, filter: { folderId: query.folder_id, kind: query.kind }, page }),
        ),
      { query: ListNotesQuery, response: { 200: NoteList }, ...detail("List notes (without bodies), newest first") },
    )
    .get("/notes/:id", ({ ctx, params }) => notes.getNote({ ctx, id: params.id }), {
      params: NoteIdParams,
      response: { 200: NoteRecord },
      ...detail("Read a note with its plain_body"),
    })
    .get("/notes/by-filename/:filename", ({ ctx, params }) => notes.getNoteByFilename({ ctx, filename: params.filename }), {
      params: FilenameParams,
      response: { 200: NoteRecord },
      ...detail("Read a stream by its exact filename (URL-encoded)"),
    })
    .post("/notes", async ({ ctx, body }) => send(await notes.createNote({ ctx, input: body.note })), {
      body: CreateNoteBody,
      response: { 201: NoteRecord },
      ...detail("Create an editable plain-text note"),
    })
    .post("/notes/bulk", async ({ ctx, body }) => send(await notes.bulkCreateNotes({ ctx, inputs: body.notes })), {
      body: BulkCreateBody,
      response: { 201: NoteList },
      ...detail("Create 1 to 50 editable notes, all or nothing"),
    })
    .patch("/notes/:id", async ({ ctx, params, body }) => send(await notes.updateNote({ ctx, id: params.id, input: body.note })), {
      params: NoteIdParams,
      body: UpdateNoteBody,
      response: { 200: NoteRecord },
      ...detail("Update title, plain_body (editable notes) or folder_id"),
    })
    .delete("/notes/:id", async ({ ctx, params }) => send(await notes.deleteNote({ ctx, id: params.id })), {
      params: NoteIdParams,
      response: { 200: Deleted },
      ...detail("Move a note to the trash: its slot is freed at once, its bytes when it is purged 30 days later"),
    })
    .get(
      "/trash",
      ({ ctx, query, request, set }) => listAnswer({ request, query, set, baseUrl: ctx.deps.config.baseUrl }, (page) => listTrash({ ctx, page })),
      { query: t.Object(PageQuery), response: { 200: TrashList }, ...detail("List the trash (without bodies), most recently trashed first") },
    )
    .delete("/trash/:id", async ({ ctx, params }) => send(await purgeNote({ ctx, id: params.id })), {
      params: NoteIdParams,
      response: { 200: Purged },
      ...detail("Purge a note from the trash now: deleted for good and its storage freed (404 when it is not in the trash); works on a full disk"),
    })
    .post("/notes/:id/pause", async ({ ctx, params }) => send(await pauseStream({ ctx, id: params.id })), {
      params: NoteIdParams,
      response: { 200: NoteRecord },
      ...detail("Pause a stream's alerts (deadman_status paused): none of any kind until its next write, which resumes watching"),
    })
    .post("/notes/:id/ack", async ({ ctx, params }) => send(await ackStream({ ctx, id: params.id })), {
      params: NoteIdParams,
      response: { 200: NoteRecord },
      ...detail("Acknowledge a late or failing stream's alert (acknowledged_at): no more repeats or escalation in this spell; 409 when it is neither"),
    })
    .post("/notes/:id/restore", async ({ ctx, params }) => send(await restoreNote({ ctx, id: params.id })), {
      params: NoteIdParams,
      response: { 200: NoteRecord },
      ...detail("Bring a note back from the trash (404 when it is not there; cap_exceeded when there is no room)"),
    });
