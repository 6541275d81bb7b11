import { Elysia, t } from "elysia";
import { send } from "../../http/reply";
import type { AnyAuth } from "../../http/plugins/auth";
import { NoteIdParams, NoteRecord } from "../notes/model";
import { SnapshotParams, SnapshotRecord } from "./model";
import * as snapshots from "./service";

const detail = (summary: string) => ({ detail: { tags: ["snapshots"], summary } });

export const snapshotsRoutes = (auth: AnyAuth) =>
  new Elysia()
    .use(auth)
    .get("/notes/:id/snapshots", ({ ctx, params }) => snapshots.listSnapshots({ ctx, noteId: params.id }), {
      params: NoteIdParams,
      response: { 200: t.Array(SnapshotRecord) },
      ...detail("List an editable note's snapshots, newest first"),
    })
    .get(
      "/notes/:id/snapshots/:snapshot_id",
      ({ ctx, params }) => snapshots.getSnapshot({ ctx, noteId: params.id, snapshotId: params.snapshot_id }),
      { params: SnapshotParams, response: { 200: SnapshotRecord }, ...detail("Read one snapshot with its body") },
    )
    .post(
      "/notes/:id/snapshots/:snapshot_id/restore",
      async ({ ctx, params }) => send(await snapshots.restoreSnapshot({ ctx, noteId: params.id, snapshotId: params.snapshot_id })),
      { params: SnapshotParams, response: { 200: NoteRecord }, ...detail("Restore a snapshot (the current content is captured first)") },
    );
