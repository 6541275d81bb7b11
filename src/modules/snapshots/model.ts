import { t } from "elysia";

export const SnapshotRecord = t.Object(
  {
    id: t.String({ description: "snap_…" }),
    note_id: t.String(),
    title: t.String(),
    byte_size: t.Integer(),
    created_at: t.String({ format: "date-time", description: "When this content was captured" }),
    plain_body: t.Optional(t.String({ description: "Present when one snapshot is read" })),
  },
  { $id: "#/components/schemas/Snapshot" },
);
export type SnapshotRecord = typeof SnapshotRecord.static;

export const SnapshotParams = t.Object({ id: t.String(), snapshot_id: t.String() });
