import { t } from "elysia";
import { PageQuery } from "../../http/list";
import { WEBHOOK_FORMATS } from "../webhooks/formats";
import { CHANNEL_KINDS } from "./url";

export const CHANNEL_NAME_MAX_CHARS = 80;
export const MAX_CHANNELS = 50;

const Format = t.UnionEnum(WEBHOOK_FORMATS, {
  description: "For https:// URLs: the body's shape, as for a stream's webhook (generic is signed with the channel's secret)",
});

export const ChannelRecord = t.Object(
  {
    id: t.String({ description: "chn_…" }),
    name: t.String(),
    kind: t.UnionEnum(CHANNEL_KINDS, { description: "Taken from the URL's scheme; webhook for https://" }),
    url: t.String({ description: "The URL with its secrets masked (tokens and passwords cut to their first characters)" }),
    format: Format,
    status: t.Union([t.Literal("enabled"), t.Literal("disabled")], { description: "disabled after 10 consecutive failed deliveries; PATCH re-enables" }),
    failures: t.Integer({ description: "Failed deliveries in a row" }),
    last_error: t.Nullable(t.String({ description: "What the last attempt (a test too) reported; null after a success" })),
    last_attempt_at: t.Nullable(t.String({ format: "date-time" })),
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  { $id: "#/components/schemas/Channel" },
);
export type ChannelRecord = typeof ChannelRecord.static;

export const ChannelBody = t.Object(
  {
    channel: t.Object({
      name: t.Optional(t.String({ description: `1 to ${CHANNEL_NAME_MAX_CHARS} characters, unique in the workspace` })),
      url: t.Optional(
        t.String({
          description:
            "Apprise's spellings: mailto:ADDR, ntfy(s)://[user:pass@|token@]HOST[:PORT]/TOPIC[?priority=1..5&tags=a,b], tgram://BOT_TOKEN/CHAT_ID, pover://USER_KEY@APP_TOKEN, gotify(s)://HOST[/PATH]/APP_TOKEN, matrix(s)://ACCESS_TOKEN@HOST/ROOM_ID, or an https:// webhook",
        }),
      ),
      format: t.Optional(Format),
    }),
  },
  { $id: "#/components/schemas/ChannelRequest" },
);
export type ChannelInput = (typeof ChannelBody.static)["channel"];

export const ChannelIdParams = t.Object({ id: t.String() });
export const ListChannelsQuery = t.Object(PageQuery);
export const ChannelTestAccepted = t.Object({ delivery_id: t.String({ description: "dlv_…: the test's delivery; its result shows in the channel's last_error and last_attempt_at" }) });
