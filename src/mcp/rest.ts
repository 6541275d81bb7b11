import type { Scope } from "../principal";
import { ToolFailure, validationFailure, type Capabilities, type Line, type NotesBackend } from "./backend";
import { followEvents } from "./rest-follow";
import type { NoteRef } from "./uris";

type Json = Record<string, unknown>;

/**
 * The local stdio server's backend: a notestream server's REST API, with NOTESTREAM_TOKEN.
 * Errors come back as the API's envelope and become tool errors with the same code.
 */
export class RestBackend implements NotesBackend {
  private plan: string | null = null;

  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  private url(path: string): string {
    return `${this.baseUrl.replace(/\/+$/, "")}/api/v1${path}`;
  }

  private async call<T = Json>(method: string, path: string, body?: unknown): Promise<{ data: T; headers: Headers }> {
    let res: Response;
    try {
      res = await fetch(this.url(path), {
        method,
        headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }), "user-agent": "notestream-mcp/1" },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      });
    } catch (e) {
      throw new ToolFailure("unavailable", `cannot reach ${this.baseUrl}: ${(e as Error).message}`);
    }
    const data = (await res.json().catch(() => null)) as Json | null;
    if (!res.ok) {
      const err = (data?.error ?? {}) as { code?: string; message?: string; details?: unknown };
      if (err.code === "validation_failed") throw validationFailure(err.details) ?? new ToolFailure(err.code, err.message ?? `HTTP ${res.status}`);
      throw new ToolFailure(err.code ?? `http_${res.status}`, err.message ?? `HTTP ${res.status}`);
    }
    return { data: data as T, headers: res.headers };
  }

  async capabilities(): Promise<Capabilities> {
    const { data } = await this.call<{ scopes: Scope[]; note_id: string | null }>("GET", "/token");
    return { scopes: new Set(data.scopes), noteId: data.note_id };
  }

  now(): number {
    return Date.now();
  }

  /** Agent writes need a paid plan: asked once, from GET /account. */
  private async writable(): Promise<void> {
    if (this.plan === null) {
      try {
        const { data } = await this.call<{ plan: string; limit_profile: string }>("GET", "/account");
        this.plan = data.limit_profile === "unlimited" ? "unlimited" : data.plan;
      } catch {
        this.plan = "unknown"; // a token without read scope: the server decides
      }
    }
    if (this.plan === "free") throw new ToolFailure("plan_required", "agent writes need a paid plan; reading works on every plan");
  }

  async listNotes(a: { limit?: number; offset?: number; folder_id?: string; query?: string }) {
    const q = new URLSearchParams();
    if (a.query !== undefined) q.set("q", a.query);
    if (a.limit !== undefined) q.set("limit", String(a.limit));
    if (a.offset !== undefined) q.set("offset", String(a.offset));
    if (a.folder_id) q.set("folder_id", a.folder_id);
    const { data, headers } = await this.call<Json[]>("GET", `${a.query === undefined ? "/notes" : "/search"}?${q}`);
    return { notes: data, total: Number(headers.get("x-total-count") ?? data.length) };
  }
  async readNote(a: { id: string }) {
    return (await this.call("GET", `/notes/${encodeURIComponent(a.id)}`)).data;
  }
  async createNote(a: { title: string; plain_body: string; folder_id?: string }) {
    await this.writable();
    return (await this.call("POST", "/notes", { note: a })).data;
  }
  async appendNote(a: { filename: string; text: string }) {
    await this.writable();
    return (await this.call("POST", `/notes/by-filename/${encodeURIComponent(a.filename)}/append`, { text: a.text })).data;
  }
  async updateNote(a: { id: string; title?: string; plain_body?: string }) {
    await this.writable();
    return (await this.call("PATCH", `/notes/${encodeURIComponent(a.id)}`, { note: { title: a.title, plain_body: a.plain_body } })).data;
  }
  async deleteNote(a: { id: string }) {
    await this.writable();
    return (await this.call("DELETE", `/notes/${encodeURIComponent(a.id)}`)).data;
  }
  async moveNote(a: { id: string; folder_id: string | null }) {
    await this.writable();
    return (await this.call("PATCH", `/notes/${encodeURIComponent(a.id)}`, { note: { folder_id: a.folder_id } })).data;
  }
  async listFolders() {
    return { folders: (await this.call<Json[]>("GET", "/folders?limit=200")).data };
  }
  async createFolder(a: { name: string }) {
    await this.writable();
    return (await this.call("POST", "/folders", { folder: a })).data;
  }
  async renameFolder(a: { id: string; name: string }) {
    await this.writable();
    return (await this.call("PATCH", `/folders/${encodeURIComponent(a.id)}`, { folder: { name: a.name } })).data;
  }
  async deleteFolder(a: { id: string }) {
    await this.writable();
    return (await this.call("DELETE", `/folders/${encodeURIComponent(a.id)}`)).data;
  }
  async streamLines(by: NoteRef, last: number) {
    return (await this.call<{ lines: Line[] }>("GET", `${linesPath(by)}?last=${last}`)).data.lines.map(({ text, at }) => ({ text, at }));
  }
  async follow(by: NoteRef, changed: () => void) {
    // Asked first so a missing stream or a missing scope is the subscriber's error, not a silent
    // retry loop; and the follow starts at the end it reports, so a line appended before the
    // follow is open still counts.
    const { data } = await this.call<{ cursor: string }>("GET", `${linesPath(by)}?last=1`);
    const stop = new AbortController();
    await followEvents(this.url(linesPath(by)), this.token, data.cursor, changed, stop.signal).catch((e) => {
      if (e instanceof ToolFailure) throw e;
      throw new ToolFailure("unavailable", `cannot follow the stream at ${this.baseUrl}: ${(e as Error).message}`);
    });
    return () => stop.abort();
  }
}

const linesPath = (by: NoteRef) => ("id" in by ? `/notes/${encodeURIComponent(by.id)}/lines` : `/notes/by-filename/${encodeURIComponent(by.filename)}/lines`);
