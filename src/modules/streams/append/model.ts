import { t } from "elysia";

export const AppendBody = t.Object({
  text: t.String({
    description: "A line of text. CRLF becomes LF, other control characters except TAB are removed, a final LF is added.",
  }),
  status: t.Optional(
    t.Union([t.Literal("ok"), t.Literal("fail"), t.Literal("start")], {
      description: "A signal for the dead-man's switch: start (a run began), ok (it succeeded), fail (it failed: one alert at once). For text/plain bodies: ?status=",
    }),
  ),
}, { $id: "#/components/schemas/AppendRequest" });
export type Signal = "ok" | "fail" | "start";

export const AppendResponse = t.Object(
  {
    id: t.String(),
    filename: t.Nullable(t.String({ description: "null for a stream restored from the trash after its name was taken" })),
    created: t.Boolean({ description: "True when this call created the note" }),
    byte_size: t.Integer(),
    bytes_remaining: t.Nullable(t.Integer({ description: "Room left under the per-note size cap; null when uncapped" })),
    storage_used: t.Integer({ description: "Bytes used in the workspace (team-wide for teams)" }),
    storage_cap: t.Nullable(t.Integer({ description: "Storage cap in bytes; null when uncapped" })),
    dropped_bytes: t.Integer({
      description: "Bytes of the oldest lines this append removed to fit under the size cap (retention drop_oldest); 0 when none",
    }),
    updated_at: t.String({ format: "date-time" }),
  },
  { $id: "#/components/schemas/AppendResult" },
);
export type AppendResponse = typeof AppendResponse.static;
