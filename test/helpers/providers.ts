import type { Server } from "bun";

/**
 * One loopback HTTP server that answers as ntfy, Telegram's Bot API, Pushover, Gotify, Matrix and a
 * Slack incoming webhook do: the same paths, status codes and JSON bodies, and the same refusals of
 * an unknown token, user key, chat or room (so a request to the wrong path or with the wrong key is
 * a failed delivery, as it would be against the real service). ntfy, Gotify, Matrix and Slack are
 * reached at its host; Telegram's and Pushover's API origins are pointed at it
 * (NOTESTREAM_TELEGRAM_API_URL, NOTESTREAM_PUSHOVER_API_URL).
 *
 * Every request is kept with the answer given; `accepted` are the ones a provider took (2xx), which
 * is what a person's phone or room would show.
 */
export type Provider = "ntfy" | "tgram" | "pover" | "gotify" | "matrix" | "slack";

export interface ProviderRequest {
  provider: Provider | "unknown";
  /** What the message is addressed to: the ntfy topic, the Telegram chat, the Pushover user key, the Gotify app token, the Matrix room, the Slack path. */
  to: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: any;
  status: number;
  at: number;
}

/** The accounts the server knows: anything else is refused as the provider refuses it. */
export interface ProviderAccounts {
  telegramBots: string[];
  telegramChats: string[];
  pushoverApps: string[];
  pushoverUsers: string[];
  gotifyApps: string[];
  matrixTokens: string[];
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => Response.json(body, { status, headers });

export function providerServer(accounts: ProviderAccounts) {
  const requests: ProviderRequest[] = [];
  /** Telegram chats whose next message holding this text is refused with 429 and this retry_after (Telegram's flood wait). */
  const floodWaits = new Map<string, { seconds: number; containing: string }>();
  /** Matrix transaction ids already sent, each with its event id: a repeated PUT gets the same event, as the spec says. */
  const matrixEvents = new Map<string, string>();
  let counter = 0;

  function answer(req: Omit<ProviderRequest, "status" | "provider" | "to">): { provider: Provider | "unknown"; to: string; res: Response } {
    const { method, path, headers, body } = req;
    const now = Math.floor(Date.now() / 1000);
    counter++;
    // Telegram: POST /bot<token>/<method>
    const tg = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(path);
    if (tg) {
      const to = String(body?.chat_id ?? "");
      if (!accounts.telegramBots.includes(tg[1]!)) return { provider: "tgram", to, res: json(401, { ok: false, error_code: 401, description: "Unauthorized" }) };
      if (tg[2] !== "sendMessage") return { provider: "tgram", to, res: json(404, { ok: false, error_code: 404, description: "Not Found" }) };
      if (!accounts.telegramChats.includes(to)) return { provider: "tgram", to, res: json(400, { ok: false, error_code: 400, description: "Bad Request: chat not found" }) };
      if (typeof body?.text !== "string" || body.text === "") return { provider: "tgram", to, res: json(400, { ok: false, error_code: 400, description: "Bad Request: message text is empty" }) };
      const flood = floodWaits.get(to);
      if (flood !== undefined && body.text.includes(flood.containing)) {
        floodWaits.delete(to);
        const wait = flood.seconds;
        return {
          provider: "tgram",
          to,
          res: json(429, { ok: false, error_code: 429, description: `Too Many Requests: retry after ${wait}`, parameters: { retry_after: wait } }, { "retry-after": String(wait) }),
        };
      }
      const chat = { id: Number(to), title: "ops", type: "supergroup" };
      return { provider: "tgram", to, res: json(200, { ok: true, result: { message_id: counter, from: { id: Number(tg[1]!.split(":")[0]), is_bot: true, first_name: "notestream", username: "notestream_bot" }, chat, date: now, text: body.text } }) };
    }
    // Pushover: POST /1/messages.json
    if (path === "/1/messages.json" && method === "POST") {
      const to = String(body?.user ?? "");
      const request = crypto.randomUUID();
      if (!accounts.pushoverApps.includes(body?.token)) return { provider: "pover", to, res: json(400, { token: "invalid", errors: ["application token is invalid"], status: 0, request }) };
      if (!accounts.pushoverUsers.includes(to)) return { provider: "pover", to, res: json(400, { user: "invalid", errors: ["user identifier is invalid"], status: 0, request }) };
      if (typeof body?.message !== "string" || body.message === "") return { provider: "pover", to, res: json(400, { message: "cannot be blank", errors: ["message cannot be blank"], status: 0, request }) };
      return { provider: "pover", to, res: json(200, { status: 1, request }) };
    }
    // Gotify: POST /message with X-Gotify-Key
    if (path === "/message" && method === "POST") {
      const to = headers["x-gotify-key"] ?? "";
      if (!accounts.gotifyApps.includes(to)) {
        return { provider: "gotify", to, res: json(401, { error: "Unauthorized", errorCode: 401, errorDescription: "you need to provide a valid access token or user/pass combination" }) };
      }
      return { provider: "gotify", to, res: json(200, { id: counter, appid: 1, message: body?.message, title: body?.title, priority: body?.priority, date: new Date().toISOString() }) };
    }
    // Matrix: PUT /_matrix/client/v3/rooms/{roomId}/send/m.room.message/{txnId}
    const mx = /^\/_matrix\/client\/v3\/rooms\/([^/]+)\/send\/m\.room\.message\/([^/]+)$/.exec(path);
    if (mx && method === "PUT") {
      const to = decodeURIComponent(mx[1]!);
      const token = (headers.authorization ?? "").replace(/^Bearer /, "");
      if (!accounts.matrixTokens.includes(token)) return { provider: "matrix", to, res: json(401, { errcode: "M_UNKNOWN_TOKEN", error: "Invalid access token passed.", soft_logout: false }) };
      const txn = `${token} ${mx[2]}`;
      const eventId = matrixEvents.get(txn) ?? `$${crypto.randomUUID().replaceAll("-", "")}`;
      matrixEvents.set(txn, eventId);
      return { provider: "matrix", to, res: json(200, { event_id: eventId }) };
    }
    // Slack incoming webhook: POST /services/T…/B…/secret answers a plain "ok".
    if (path.startsWith("/services/") && method === "POST") {
      if (typeof body?.text !== "string") return { provider: "slack", to: path, res: new Response("invalid_payload", { status: 400 }) };
      return { provider: "slack", to: path, res: new Response("ok", { headers: { "content-type": "text/html" } }) };
    }
    // ntfy: a JSON publish to the server's root.
    if (path === "/" && method === "POST" && typeof body?.topic === "string") {
      const to = body.topic as string;
      const id = crypto.randomUUID().replaceAll("-", "").slice(0, 12);
      return {
        provider: "ntfy",
        to,
        res: json(200, { id, time: now, expires: now + 43_200, event: "message", topic: to, title: body.title, message: body.message, priority: body.priority, tags: body.tags }),
      };
    }
    return { provider: "unknown", to: "", res: json(404, { code: 40401, http: 404, error: "page not found" }) };
  }

  const server: Server<undefined> = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      const raw = await request.text();
      let body: any = raw;
      try {
        body = JSON.parse(raw);
      } catch {}
      const seen = { method: request.method, path: url.pathname, headers: Object.fromEntries(request.headers), body, at: Date.now() };
      const { provider, to, res } = answer(seen);
      requests.push({ ...seen, provider, to, status: res.status });
      return res;
    },
  });

  const host = `127.0.0.1:${server.port}`;
  return {
    requests,
    host,
    url: `http://${host}`,
    /** The requests to this provider and addressee, in arrival order, whatever the answer. */
    to: (provider: Provider, to: string) => requests.filter((r) => r.provider === provider && r.to === to),
    /** The messages this provider took for this addressee (2xx), in arrival order. */
    accepted: (provider: Provider, to: string) => requests.filter((r) => r.provider === provider && r.to === to && r.status >= 200 && r.status < 300),
    /** The next message to this Telegram chat holding this text is refused with 429 and retry_after (header and body). */
    floodWaitOnce(chatId: string, seconds: number, containing: string) {
      floodWaits.set(chatId, { seconds, containing });
    },
    stop: () => server.stop(true),
  };
}

export type ProviderServer = ReturnType<typeof providerServer>;
