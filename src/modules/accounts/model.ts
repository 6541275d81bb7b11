import { t } from "elysia";
import { PLAN_NAMES } from "../../limits/plans";

const Timestamp = t.String({ format: "date-time" });
const cap = (description: string) => t.Nullable(t.Integer({ description: `${description}; null when uncapped` }));

export const AccountRecord = t.Object(
  {
    id: t.String({ description: "acct_…" }),
    email: t.String(),
    name: t.String(),
    workspace: t.Object({ id: t.String(), kind: t.Union([t.Literal("personal"), t.Literal("team")]), name: t.String() }),
    plan: t.String({ description: `One of ${PLAN_NAMES.join(", ")}` }),
    limit_profile: t.String({ description: "The operator's limit profile (standard, unlimited…)" }),
    state: t.Union([t.Literal("active"), t.Literal("trial"), t.Literal("trial_ended"), t.Literal("read_only")]),
    trial_ends_at: t.Nullable(Timestamp),
    api_access: t.Boolean(),
    usage: t.Object({
      notes: t.Integer(),
      plain_notes: t.Integer(),
      rich_notes: t.Integer(),
      storage_bytes: t.Integer(),
      folders: t.Integer(),
      active_tokens: t.Integer(),
    }),
    caps: t.Object({
      notes: cap("Notes of any kind, where the plan counts them together"),
      plain_notes: cap("Plain notes and streams, where counted apart"),
      rich_notes: cap("Rich-text notes, where counted apart"),
      storage_bytes: cap("Bytes of storage"),
      plain_note_bytes: cap("Bytes of one plain note or stream"),
      rich_note_bytes: cap("Bytes of one rich-text note"),
      folders: cap("Folders"),
      active_tokens: cap("Active API tokens"),
    }),
    rate_limits_per_minute: t.Nullable(t.Object({ reads: t.Integer(), writes: t.Integer(), appends: t.Integer() }, { description: "null when the plan has no API rates" })),
    created_at: Timestamp,
  },
  { $id: "#/components/schemas/Account" },
);

export const TokenRecord = t.Object(
  {
    id: t.String({ description: "tok_…, or the OAuth grant's id" }),
    kind: t.Union([t.Literal("api"), t.Literal("extension")]),
    scopes: t.Array(t.Union([t.Literal("read"), t.Literal("write"), t.Literal("append")])),
    note_id: t.Nullable(t.String({ description: "The only note this token sees, when pinned" })),
    workspace_id: t.String(),
    expires_at: Timestamp,
  },
  { $id: "#/components/schemas/Token" },
);
