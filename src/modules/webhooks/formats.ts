export const WEBHOOK_FORMATS = ["generic", "slack", "discord", "teams", "google_chat", "mattermost"] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** What one append tells a receiver. */
export interface AppendEvent {
  deliveryId: string;
  createdAt: string;
  note: { id: string; filename: string | null; title: string };
  text: string;
  byteSize: number;
  updatedAt: string;
  /** note.appended unless said otherwise (note.alert for dead-man and signal alerts, webhook.test for the settings page's test button, digest for a channel's digest). */
  type?: "note.alert" | "webhook.test" | "digest";
}

/** Each platform's limit on a message's text, in characters; longer text is cut with an ellipsis. */
export const TEXT_LIMITS: Record<Exclude<WebhookFormat, "generic">, number> = {
  slack: 40_000, // Slack truncates text past 40,000 characters
  discord: 2_000, // Discord refuses content over 2,000
  teams: 20_000, // keeps the card well under Teams' 28 KB message limit
  google_chat: 4_096,
  mattermost: 16_383, // Mattermost's default maximum post size
};

export function cut(text: string, limit: number): string {
  const chars = [...text];
  return chars.length <= limit ? text : chars.slice(0, limit - 1).join("") + "…";
}

/** The generic envelope of API.md. */
export function genericBody(e: AppendEvent) {
  return {
    id: e.deliveryId,
    type: e.type ?? "note.appended",
    created_at: e.createdAt,
    data: { note: e.note, text: e.text, byte_size: e.byteSize, updated_at: e.updatedAt },
  };
}

/** The body reshaped for a platform's incoming webhook; the signature headers stay the same. */
export function shapeBody(format: WebhookFormat, e: AppendEvent): unknown {
  if (format === "generic") return genericBody(e);
  const name = e.note.filename ?? e.note.title;
  const line = e.text.replace(/\n$/, "");
  const text = cut(`[${name}] ${line}`, TEXT_LIMITS[format]);
  switch (format) {
    case "slack":
    case "mattermost":
    case "google_chat":
      return { text };
    case "discord":
      return { content: text, allowed_mentions: { parse: [] } };
    case "teams":
      // A Teams Workflows ("Post to a channel when a webhook request is received") message: one Adaptive Card.
      return {
        type: "message",
        attachments: [
          {
            contentType: "application/vnd.microsoft.card.adaptive",
            contentUrl: null,
            content: {
              $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
              type: "AdaptiveCard",
              version: "1.4",
              body: [
                { type: "TextBlock", text: name, weight: "Bolder", wrap: true },
                { type: "TextBlock", text: cut(line, TEXT_LIMITS.teams), wrap: true },
              ],
            },
          },
        ],
      };
  }
}
