/**
 * notestream-client: the notestream API from JavaScript and TypeScript, on `fetch` alone (Node 20+,
 * Bun, Deno, browsers). The record types come from the service's OpenAPI document
 * (./openapi.ts, generated), not from copies.
 */
import type { components } from "./openapi.js";

type Schemas = components["schemas"];
export type Note = Schemas["Note"];
export type Folder = Schemas["Folder"];
export type AppendResult = Schemas["AppendResult"];
export type Line = Schemas["Line"];
export type Lines = Schemas["Lines"];
export type SearchHit = Schemas["SearchHit"];
export type NoteUpdate = Schemas["NoteUpdateRequest"]["note"];
export type Signal = NonNullable<Schemas["AppendRequest"]["status"]>;
export type ErrorCode = Schemas["Error"]["error"]["code"];

/** A refusal of the API: its HTTP status, the envelope's code, message and details, and Retry-After in seconds when it said one. */
export class NotestreamError extends Error {
  override readonly name = "NotestreamError";
  constructor(
    readonly status: number,
    readonly code: ErrorCode | "network_error",
    message: string,
    readonly details: unknown = undefined,
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }
}

export interface NotestreamOptions {
  /** The service's origin, e.g. https://notes.example.com */
  url: string;
  /** An API token (nst_…) */
  token: string;
  /** A fetch of your own (a proxy agent, a test double); the global one by default. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** How many times a 429 is retried after its Retry-After (default 3). */
  retries?: number;
}

export interface Page {
  limit?: number;
  offset?: number;
}

/** A list page and the total the API counted (X-Total-Count). */
export interface Listed<T> {
  items: T[];
  total: number;
}

const MAX_WAIT_SECONDS = 60;

export class Notestream {
  private readonly base: string;
  private readonly token: string;
  private readonly doFetch: (input: string, init: RequestInit) => Promise<Response>;
  private readonly retries: number;

  constructor(options: NotestreamOptions) {
    this.base = options.url.replace(/\/+$/, "") + "/api/v1";
    this.token = options.token;
    this.doFetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.retries = options.retries ?? 3;
  }

  /** Appends a line (or several) to a stream, creating it on the first write. */
  append(filename: string, text: string, options: { status?: Signal; idempotencyKey?: string } = {}): Promise<AppendResult> {
    const headers: Record<string, string> = options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {};
    return this.json("POST", `/notes/by-filename/${encodeURIComponent(filename)}/append`, { text, ...(options.status ? { status: options.status } : {}) }, headers);
  }

  /** A stream's newest lines (`{last}`), or the lines after a cursor (`{cursor, limit}`), oldest first. */
  lines(filename: string, options: { last?: number } | { cursor: string; limit?: number } = {}): Promise<Lines> {
    return this.json("GET", `/notes/by-filename/${encodeURIComponent(filename)}/lines${query(options)}`);
  }

  /**
   * The stream's new lines as they are appended: an async iterator over the service's Server-Sent
   * Events. A dropped connection (a restart, a proxy) is opened again with Last-Event-ID, so no
   * line is repeated or skipped. Start after `cursor`, or with the newest `last` lines; stop with
   * `signal` or by leaving the loop.
   */
  async *follow(filename: string, options: { cursor?: string; last?: number; signal?: AbortSignal } = {}): AsyncGenerator<Line> {
    let cursor = options.cursor ?? null;
    let first = true;
    for (let attempt = 0; ; attempt++) {
      const controller = new AbortController();
      const stop = () => controller.abort();
      options.signal?.addEventListener("abort", stop);
      try {
        if (options.signal?.aborted) return;
        const q = first && !cursor && options.last ? `?last=${options.last}` : "";
        const headers: Record<string, string> = { accept: "text/event-stream", ...(cursor ? { "last-event-id": cursor } : {}) };
        let res: Response;
        try {
          res = await this.raw("GET", `/notes/by-filename/${encodeURIComponent(filename)}/lines${q}`, undefined, headers, controller.signal);
        } catch (e) {
          if (options.signal?.aborted) return;
          if (e instanceof NotestreamError && e.status !== 0 && e.status < 500) throw e;
          await sleep(Math.min(1000 * 2 ** Math.min(attempt, 5), 30_000), options.signal);
          continue;
        }
        first = false;
        attempt = 0;
        for await (const event of events(res.body!)) {
          const line = JSON.parse(event.data) as { text: string; at: string };
          cursor = event.id ?? cursor;
          yield { text: line.text, at: line.at, cursor: event.id ?? "" };
        }
      } catch (e) {
        if (options.signal?.aborted) return;
        if (e instanceof NotestreamError) throw e;
        // The connection dropped: open it again from the last line seen.
      } finally {
        options.signal?.removeEventListener("abort", stop);
        controller.abort();
      }
      await sleep(Math.min(500 * 2 ** Math.min(attempt, 5), 30_000), options.signal);
    }
  }

  /** Notes of the workspace: list (without bodies), get, create, update, delete (to the trash), move. */
  readonly notes = {
    list: (options: Page & { folderId?: string; kind?: "stream" | "editable" } = {}): Promise<Listed<Note>> =>
      this.listed("/notes", { limit: options.limit, offset: options.offset, folder_id: options.folderId, kind: options.kind }),
    get: (id: string): Promise<Note> => this.json("GET", `/notes/${encodeURIComponent(id)}`),
    byFilename: (filename: string): Promise<Note> => this.json("GET", `/notes/by-filename/${encodeURIComponent(filename)}`),
    create: (note: { title: string; plain_body: string; folder_id?: string | null }): Promise<Note> => this.json("POST", "/notes", { note }),
    update: (id: string, note: NoteUpdate): Promise<Note> => this.json("PATCH", `/notes/${encodeURIComponent(id)}`, { note }),
    delete: (id: string): Promise<{ id: string; deleted: true }> => this.json("DELETE", `/notes/${encodeURIComponent(id)}`),
    move: (id: string, folderId: string | null): Promise<Note> => this.json("PATCH", `/notes/${encodeURIComponent(id)}`, { note: { folder_id: folderId } }),
  };

  /** Folders of the workspace. */
  readonly folders = {
    list: (options: Page = {}): Promise<Listed<Folder>> => this.listed("/folders", { limit: options.limit, offset: options.offset }),
    create: (name: string): Promise<Folder> => this.json("POST", "/folders", { folder: { name } }),
    rename: (id: string, name: string): Promise<Folder> => this.json("PATCH", `/folders/${encodeURIComponent(id)}`, { folder: { name } }),
    delete: (id: string): Promise<{ id: string; deleted: true }> => this.json("DELETE", `/folders/${encodeURIComponent(id)}`),
  };

  /** Full-text search of titles and text, best match first. */
  search(q: string, options: Page & { folderId?: string } = {}): Promise<Listed<SearchHit>> {
    return this.listed("/search", { q, limit: options.limit, offset: options.offset, folder_id: options.folderId });
  }

  private async listed<T>(path: string, params: Record<string, string | number | undefined>): Promise<Listed<T>> {
    const res = await this.raw("GET", path + query(params));
    const items = (await res.json()) as T[];
    return { items, total: Number(res.headers.get("x-total-count") ?? items.length) };
  }

  private async json<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    return (await (await this.raw(method, path, body, headers)).json()) as T;
  }

  /** One request, a 429 retried after its Retry-After; a refusal thrown as NotestreamError. */
  private async raw(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.doFetch(this.base + path, {
          method,
          headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal,
        });
      } catch (e) {
        throw new NotestreamError(0, "network_error", `could not reach ${this.base}: ${(e as Error).message}`);
      }
      if (res.ok) return res;
      const retryAfter = retryAfterSeconds(res.headers.get("retry-after"));
      if (res.status === 429 && attempt < this.retries && retryAfter !== null && retryAfter <= MAX_WAIT_SECONDS) {
        await res.body?.cancel();
        await sleep(retryAfter * 1000, signal);
        continue;
      }
      throw await errorOf(res, retryAfter);
    }
  }
}

async function errorOf(res: Response, retryAfter: number | null): Promise<NotestreamError> {
  const text = await res.text();
  try {
    const { error } = JSON.parse(text) as Schemas["Error"];
    return new NotestreamError(res.status, error.code, error.message, error.details, retryAfter);
  } catch {
    return new NotestreamError(res.status, res.status >= 500 ? "internal_error" : "bad_request", `HTTP ${res.status}: ${text.slice(0, 200)}`, undefined, retryAfter);
  }
}

function retryAfterSeconds(raw: string | null): number | null {
  if (raw === null) return null;
  if (/^\d+$/.test(raw.trim())) return Number(raw);
  const at = Date.parse(raw);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}

/** The events of a text/event-stream body (WHATWG's parsing rules: id, data, comments). */
async function* events(body: ReadableStream<Uint8Array>): AsyncGenerator<{ id: string | null; data: string }> {
  const decoder = new TextDecoder();
  let buffer = "";
  let id: string | null = null;
  let data: string[] = [];
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer.startsWith("\r\n", nl) ? 2 : 1));
        if (line === "") {
          if (data.length > 0) yield { id, data: data.join("\n") };
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") data.push(value);
        else if (field === "id") id = value;
      }
    }
  } finally {
    reader.releaseLock();
  }
}
