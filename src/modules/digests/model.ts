import { t } from "elysia";
import { PageQuery } from "../../http/list";

export const MAX_DIGESTS = 20;
export const MAX_DIGEST_STREAMS = 100;
export const MAX_DIGEST_LINES = 20;

export const DigestRecord = t.Object(
  {
    id: t.String({ description: "dgs_…" }),
    schedule: t.String({ description: "Cron, 5 fields (or 6 with seconds first)" }),
    timezone: t.String(),
    channel_id: t.Nullable(t.String({ description: "The channel it goes to (chn_…), or null when it is mailed" })),
    email: t.Nullable(t.String({ description: "The address it is mailed to, or null when it goes to a channel" })),
    streams: t.Union([t.Literal("all"), t.Array(t.String())], { description: '"all" of the workspace\'s streams, or these filenames' }),
    last_lines: t.Integer({ description: "How many of each active stream's last lines it quotes (0 to 20)" }),
    next_run_at: t.String({ format: "date-time" }),
    last_sent_at: t.Nullable(t.String({ format: "date-time", description: "The next digest covers what happened since then (since creation before the first)" })),
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  { $id: "#/components/schemas/Digest" },
);
export type DigestRecord = typeof DigestRecord.static;

export const DigestBody = t.Object(
  {
    digest: t.Object({
      schedule: t.Optional(t.String({ description: "Cron, 5 fields (or 6 with seconds first), e.g. 0 8 * * 1-5" })),
      timezone: t.Optional(t.String({ description: "IANA name (default UTC)" })),
      channel_id: t.Optional(t.Nullable(t.String({ description: "chn_… of this workspace; or set email" }))),
      email: t.Optional(t.Nullable(t.String({ description: "An address to mail it to; or set channel_id" }))),
      streams: t.Optional(t.Union([t.Literal("all"), t.Array(t.String())], { description: `"all" (the default) or up to ${MAX_DIGEST_STREAMS} filenames` })),
      last_lines: t.Optional(t.Integer({ description: `0 to ${MAX_DIGEST_LINES} (default 5)` })),
    }),
  },
  { $id: "#/components/schemas/DigestRequest" },
);
export type DigestInput = (typeof DigestBody.static)["digest"];

export const DigestIdParams = t.Object({ id: t.String() });
export const ListDigestsQuery = t.Object(PageQuery);
