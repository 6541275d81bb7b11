import { WEBHOOK_FORMATS, type WebhookFormat } from "../webhooks/formats";

/**
 * A channel's URL, in Apprise's spellings (https://github.com/caronc/apprise/wiki), read by hand:
 * a Telegram bot token (`123456:ABC-DEF`) or a Matrix room id (`!abc:example.org`) is not a
 * host:port, so the WHATWG parser refuses or misreads them.
 */
export type Target =
  | { kind: "mailto"; address: string }
  | { kind: "ntfy"; base: string; topic: string; auth: { user: string; password: string } | { token: string } | null; priority: number | null; tags: string[] }
  | { kind: "tgram"; botToken: string; chatId: string }
  | { kind: "pover"; userKey: string; appToken: string; priority: number | null }
  | { kind: "gotify"; base: string; appToken: string; priority: number | null }
  | { kind: "matrix"; base: string; accessToken: string; roomId: string }
  | { kind: "webhook"; url: string; format: WebhookFormat };

type ChannelKind = Target["kind"];
export const CHANNEL_KINDS = ["mailto", "ntfy", "tgram", "pover", "gotify", "matrix", "webhook"] as const satisfies readonly ChannelKind[];
const MAX_CHANNEL_URL = 2048;

/** Why a URL is not a channel, in words after "url "; thrown by parseChannelUrl. */
export class ChannelUrlProblem extends Error {}

const EXAMPLES =
  "mailto:ops@example.com, ntfys://ntfy.sh/topic, tgram://BOT_TOKEN/CHAT_ID, pover://USER_KEY@APP_TOKEN, gotifys://host/APP_TOKEN, matrixs://ACCESS_TOKEN@host/!room:host, or https://…";

const PRIORITY_WORDS: Record<string, number> = { min: 1, low: 2, default: 3, high: 4, max: 5, urgent: 5 };

/** The parts of `scheme://[userinfo@]host[:port][/path][?query]`, kept as written (no decoding but the path's). */
function split(rest: string): { userinfo: string | null; host: string; path: string[]; query: URLSearchParams } {
  const q = rest.indexOf("?");
  const query = new URLSearchParams(q >= 0 ? rest.slice(q + 1) : "");
  const main = q >= 0 ? rest.slice(0, q) : rest;
  const slash = main.indexOf("/");
  const authority = slash >= 0 ? main.slice(0, slash) : main;
  const path = (slash >= 0 ? main.slice(slash + 1) : "").split("/").filter(Boolean).map(decode);
  const at = authority.lastIndexOf("@");
  return { userinfo: at >= 0 ? authority.slice(0, at) : null, host: at >= 0 ? authority.slice(at + 1) : authority, path, query };
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new ChannelUrlProblem(`has a malformed %-escape in "${s}"`);
  }
}

/** A host[:port] as an http(s) origin, checked by the URL parser. */
function origin(host: string, secure: boolean, what: string): string {
  if (!/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/.test(host)) throw new ChannelUrlProblem(`needs a host name for ${what} (${host === "" ? "none given" : `"${host}" is not one`})`);
  return new URL(`${secure ? "https" : "http"}://${host}`).origin;
}

/** The server of an ntfy or Gotify URL: its origin and the path before the last segment (one served under a sub-path). */
function serverBase(parts: { host: string; path: string[] }, secure: boolean, what: string): string {
  return origin(parts.host, secure, what) + parts.path.slice(0, -1).map((p) => `/${encodeURIComponent(p)}`).join("");
}

/** A server's base back in the channel's spelling: the scheme (`s` added for https) and host with any sub-path. */
function respelled(base: string, scheme: string): { scheme: string; server: string } {
  const u = new URL(base);
  return { scheme: u.protocol === "https:" ? `${scheme}s` : scheme, server: `${u.host}${u.pathname.replace(/\/$/, "")}` };
}

function priority(query: URLSearchParams, min: number, max: number): number | null {
  const raw = query.get("priority");
  if (raw === null) return null;
  const n = /^-?\d+$/.test(raw) ? Number(raw) : PRIORITY_WORDS[raw.toLowerCase()];
  if (n === undefined || n < min || n > max) throw new ChannelUrlProblem(`has priority "${raw}"; it must be a whole number from ${min} to ${max}`);
  return n;
}

/** Reads a channel URL; `format` matters to https:// URLs only. Throws ChannelUrlProblem. */
export function parseChannelUrl(raw: string, format: WebhookFormat = "generic"): Target {
  const url = raw.trim();
  if (url.length > MAX_CHANNEL_URL) throw new ChannelUrlProblem(`must be at most ${MAX_CHANNEL_URL} characters`);
  const mail = /^mailto:([^?]+)$/i.exec(url);
  if (mail) {
    const address = decode(mail[1]!).trim().toLowerCase();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address)) throw new ChannelUrlProblem(`mailto: needs an e-mail address ("${address}" is not one)`);
    return { kind: "mailto", address };
  }
  const m = /^([a-z]+):\/\/(.*)$/i.exec(url);
  if (!m) throw new ChannelUrlProblem(`must be a channel URL such as ${EXAMPLES}`);
  const scheme = m[1]!.toLowerCase();
  const parts = split(m[2]!);
  switch (scheme) {
    case "ntfy":
    case "ntfys": {
      const topic = parts.path.at(-1) ?? "";
      if (!/^[-_A-Za-z0-9]{1,64}$/.test(topic)) throw new ChannelUrlProblem("needs a topic: ntfys://ntfy.sh/TOPIC, the topic 1 to 64 letters, digits, - or _");
      const base = serverBase(parts, scheme === "ntfys", "the ntfy server");
      const token = parts.query.get("token");
      let auth: Extract<Target, { kind: "ntfy" }>["auth"] = token ? { token } : null;
      if (parts.userinfo !== null) {
        const colon = parts.userinfo.indexOf(":");
        if (colon < 0) auth = { token: decode(parts.userinfo) };
        else auth = { user: decode(parts.userinfo.slice(0, colon)), password: decode(parts.userinfo.slice(colon + 1)) };
      }
      const tags = (parts.query.get("tags") ?? "").split(",").map((t) => t.trim()).filter(Boolean);
      return { kind: "ntfy", base, topic, auth, priority: priority(parts.query, 1, 5), tags };
    }
    case "tgram": {
      const [botToken, chatId] = [parts.host, ...parts.path] as [string, string | undefined];
      if (!/^\d+:[A-Za-z0-9_-]+$/.test(botToken)) throw new ChannelUrlProblem("needs a bot token from @BotFather: tgram://123456789:ABC-DEF…/CHAT_ID");
      if (!chatId || !/^(-?\d+|@[A-Za-z0-9_]{5,32})$/.test(chatId)) throw new ChannelUrlProblem("needs a chat id after the bot token: a number (-100… for a group or channel) or @channelname");
      return { kind: "tgram", botToken, chatId };
    }
    case "pover": {
      const userKey = parts.userinfo ?? "";
      const appToken = parts.host;
      if (!/^[A-Za-z0-9]{30}$/.test(userKey) || !/^[A-Za-z0-9]{30}$/.test(appToken)) {
        throw new ChannelUrlProblem("needs your user key and an application token, 30 letters and digits each: pover://USER_KEY@APP_TOKEN");
      }
      return { kind: "pover", userKey, appToken, priority: priority(parts.query, -2, 1) };
    }
    case "gotify":
    case "gotifys": {
      const appToken = parts.path.at(-1) ?? "";
      if (!/^[A-Za-z0-9._-]{8,64}$/.test(appToken)) {
        // The token is a secret: its length is said, not its text.
        const which = appToken === "" ? "none given" : /^[A-Za-z0-9._-]*$/.test(appToken) ? `this one is ${appToken.length} characters` : "this one has other characters";
        throw new ChannelUrlProblem(`needs an application token after the host, 8 to 64 letters, digits, '.', '_' or '-' (${which}): gotifys://gotify.example.com/APP_TOKEN`);
      }
      return { kind: "gotify", base: serverBase(parts, scheme === "gotifys", "the Gotify server"), appToken, priority: priority(parts.query, 0, 10) };
    }
    case "matrix":
    case "matrixs": {
      const accessToken = parts.userinfo === null ? "" : decode(parts.userinfo);
      const roomId = parts.path.join("/");
      if (!/^[^\s:@/]{8,}$/.test(accessToken)) throw new ChannelUrlProblem("needs an access token before the host: matrixs://ACCESS_TOKEN@matrix.example.org/!room:example.org");
      if (!/^![^\s:]+:[^\s]+$/.test(roomId)) throw new ChannelUrlProblem("needs a room id after the host, as Element shows it in the room's settings: !abc123:example.org");
      return { kind: "matrix", base: origin(parts.host, scheme === "matrixs", "the Matrix homeserver"), accessToken, roomId };
    }
    case "http":
    case "https": {
      if (!URL.canParse(url)) throw new ChannelUrlProblem("must be an absolute http or https URL");
      if (!(WEBHOOK_FORMATS as readonly string[]).includes(format)) throw new ChannelUrlProblem(`has an unknown format "${format}"`);
      return { kind: "webhook", url, format };
    }
    default:
      throw new ChannelUrlProblem(`has an unknown scheme "${scheme}://"; use ${EXAMPLES}`);
  }
}

const hide = (secret: string) => (secret.length <= 8 ? "****" : `${secret.slice(0, 4)}****`);

/** The URL as the API and the pages show it: each secret cut to its first characters. */
export function maskedUrl(t: Target): string {
  switch (t.kind) {
    case "mailto":
      return `mailto:${t.address}`;
    case "ntfy": {
      const auth = t.auth === null ? "" : "token" in t.auth ? `${hide(t.auth.token)}@` : `${t.auth.user}:****@`;
      const { scheme, server } = respelled(t.base, "ntfy");
      const query = [t.priority === null ? "" : `priority=${t.priority}`, t.tags.length ? `tags=${t.tags.join(",")}` : ""].filter(Boolean).join("&");
      return `${scheme}://${auth}${server}/${t.topic}${query ? `?${query}` : ""}`;
    }
    case "tgram":
      return `tgram://${t.botToken.split(":")[0]}:****/${t.chatId}`;
    case "pover":
      return `pover://${hide(t.userKey)}@${hide(t.appToken)}${t.priority === null ? "" : `?priority=${t.priority}`}`;
    case "gotify": {
      const { scheme, server } = respelled(t.base, "gotify");
      return `${scheme}://${server}/${hide(t.appToken)}`;
    }
    case "matrix": {
      const { scheme, server } = respelled(t.base, "matrix");
      return `${scheme}://${hide(t.accessToken)}@${server}/${t.roomId}`;
    }
    case "webhook": {
      // Chat webhooks carry their secret in the path (Slack's /services/T…/B…/XXXX) or the query.
      const u = new URL(t.url);
      return u.pathname.length > 1 || u.search ? `${u.origin}/****` : u.origin;
    }
  }
}
