import { shapeBody, cut, TEXT_LIMITS } from "../webhooks/formats";
import { signatureHeaders } from "../webhooks/sign";
import type { Target } from "./url";

/** What goes to a channel: a title (the mail's subject, a push notification's title) and its text. */
export interface ChannelMessage {
  deliveryId: string;
  event: "alert" | "lines" | "digest" | "test";
  title: string;
  text: string;
  createdAt: string;
  note: { id: string; filename: string | null; title: string } | null;
  /** An alert that needs eyes (late, failing): a push provider's higher priority, unless the URL sets one. */
  urgent?: boolean;
}

export interface ProviderRequest {
  method: "POST" | "PUT";
  url: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * Each platform's limit on a message's text, in characters (ntfy's is 4,096 bytes): longer text is
 * cut to it. Pushover's title is 250 characters at most.
 */
const PROVIDER_LIMITS = { ntfy: 4_096, tgram: 4_096, pover: 1_024, gotify: 16_000, matrix: 30_000 } as const;

const json = { "content-type": "application/json" };

/**
 * How much text a message to this target holds, and how it is measured (ntfy counts bytes), after
 * the title where the provider puts both in one text: gathered lines are cut to it.
 */
export function messageRoom(t: Target, title: string): { limit: number; size: (s: string) => number } {
  const chars = (s: string) => [...s].length;
  switch (t.kind) {
    case "ntfy":
      return { limit: PROVIDER_LIMITS.ntfy, size: (s) => Buffer.byteLength(s) };
    case "tgram":
    case "matrix":
      return { limit: PROVIDER_LIMITS[t.kind] - chars(title) - 1, size: chars };
    case "pover":
    case "gotify":
      return { limit: PROVIDER_LIMITS[t.kind], size: chars };
    case "webhook":
      return { limit: t.format === "generic" ? 64_000 : TEXT_LIMITS[t.format] - chars(title) - 3, size: chars };
    case "mailto":
      return { limit: 100_000, size: chars };
  }
}

/** The last bytes of a UTF-8 string kept whole: the cut falls between characters. */
function cutBytes(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  let out = "";
  let size = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch);
    if (size + n > max - 3) break;
    out += ch;
    size += n;
  }
  return out + "…";
}

/**
 * The HTTP request each provider's API takes for one message: ntfy's JSON publish, Telegram's
 * sendMessage, Pushover's messages.json, Gotify's /message, Matrix's room send (the delivery id is
 * its transaction id, so a retried PUT posts the message once), or a webhook in its format
 * (generic ones signed with the channel's secret, as a stream's webhook is).
 */
export function providerRequest(t: Exclude<Target, { kind: "mailto" }>, m: ChannelMessage, apis: { telegram: string; pushover: string }, secret: string | null, nowSeconds: number): ProviderRequest {
  const textWithTitle = `${m.title}\n${m.text}`;
  switch (t.kind) {
    case "ntfy": {
      const headers: Record<string, string> = { ...json };
      if (t.auth) headers.authorization = "token" in t.auth ? `Bearer ${t.auth.token}` : `Basic ${Buffer.from(`${t.auth.user}:${t.auth.password}`).toString("base64")}`;
      const body = { topic: t.topic, title: cut(m.title, 250), message: cutBytes(m.text, PROVIDER_LIMITS.ntfy), priority: t.priority ?? (m.urgent ? 4 : 3), tags: t.tags };
      return { method: "POST", url: `${t.base}/`, headers, body: JSON.stringify(body) };
    }
    case "tgram":
      return {
        method: "POST",
        url: `${apis.telegram}/bot${t.botToken}/sendMessage`,
        headers: json,
        body: JSON.stringify({ chat_id: t.chatId, text: cut(textWithTitle, PROVIDER_LIMITS.tgram), disable_web_page_preview: true }),
      };
    case "pover":
      return {
        method: "POST",
        url: `${apis.pushover}/1/messages.json`,
        headers: json,
        body: JSON.stringify({ token: t.appToken, user: t.userKey, title: cut(m.title, 250), message: cut(m.text, PROVIDER_LIMITS.pover), priority: t.priority ?? (m.urgent ? 1 : 0) }),
      };
    case "gotify":
      return {
        method: "POST",
        url: `${t.base}/message`,
        headers: { ...json, "x-gotify-key": t.appToken },
        body: JSON.stringify({ title: m.title, message: cut(m.text, PROVIDER_LIMITS.gotify), priority: t.priority ?? (m.urgent ? 8 : 5) }),
      };
    case "matrix":
      return {
        method: "PUT",
        url: `${t.base}/_matrix/client/v3/rooms/${encodeURIComponent(t.roomId)}/send/m.room.message/${encodeURIComponent(m.deliveryId)}`,
        headers: { ...json, authorization: `Bearer ${t.accessToken}` },
        body: JSON.stringify({ msgtype: "m.text", body: cut(textWithTitle, PROVIDER_LIMITS.matrix) }),
      };
    case "webhook": {
      const note = m.note ?? { id: "", filename: null, title: m.title };
      const type = m.event === "alert" ? "note.alert" : m.event === "test" ? "webhook.test" : m.event === "digest" ? "digest" : undefined;
      const text = m.event === "lines" ? m.text : m.note ? m.text : `${m.title}\n${m.text}`;
      const body = JSON.stringify(shapeBody(t.format, { deliveryId: m.deliveryId, createdAt: m.createdAt, note, text, byteSize: Buffer.byteLength(text), updatedAt: m.createdAt, type }));
      const headers: Record<string, string> = { ...json, "user-agent": "notestream-channels/1" };
      if (t.format === "generic" && secret) Object.assign(headers, signatureHeaders(secret, m.deliveryId, body, nowSeconds));
      return { method: "POST", url: t.url, headers, body };
    }
  }
}
