import { t } from "elysia";

/** What a badge says: the stream's state as its watcher sees it (service.ts `badgeMessage`). */
export const BadgeMessage = t.Union([t.Literal("up"), t.Literal("late"), t.Literal("failing"), t.Literal("paused"), t.Literal("new")]);
export type BadgeMessage = typeof BadgeMessage.static;

export const BadgeUrls = t.Object(
  {
    svg_url: t.String({ description: "The badge as an image (image/svg+xml), readable without a token" }),
    json_url: t.String({ description: "The badge as shields.io's endpoint JSON, readable without a token" }),
  },
  { $id: "#/components/schemas/BadgeUrls" },
);
export type BadgeUrls = typeof BadgeUrls.static;

/** shields.io's endpoint schema (https://shields.io/badges/endpoint-badge), nothing more. */
export const BadgeJson = t.Object({
  schemaVersion: t.Literal(1),
  label: t.String(),
  message: BadgeMessage,
  color: t.String(),
});
export type BadgeJson = typeof BadgeJson.static;
