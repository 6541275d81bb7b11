import type { Ctx } from "../deps";
import { AppError, ValidationFailed } from "../http/errors";
import { rateFor, tokenRateKey } from "../http/rate-limit";
import { pageFrom } from "../lib/pagination";
import * as folders from "../modules/folders/service";
import * as notes from "../modules/notes/service";
import { searchNotes } from "../modules/search/service";
import { appendByFilename } from "../modules/streams/append/service";
import { followers } from "../modules/streams/follow";
import { endOf, readableStream, readLines } from "../modules/streams/lines";
import { getWorkspace } from "../modules/workspaces/repo";
import { ToolFailure, validationFailure, type Capabilities, type NotesBackend } from "./backend";
import type { NoteRef } from "./uris";

type Bucket = "reads" | "writes" | "appends";

/**
 * The hosted endpoint's backend: the same services as REST, so the same validation, caps and
 * errors; each call counts against the token's rate bucket like the REST call it stands for.
 * Agent writes need a paid plan.
 */
export class LocalBackend implements NotesBackend {
  constructor(private readonly ctx: Ctx) {}

  async capabilities(): Promise<Capabilities> {
    return { scopes: this.ctx.principal.scopes, noteId: this.ctx.principal.noteId };
  }

  now(): number {
    return this.ctx.deps.clock.now();
  }

  private async run<T>(bucket: Bucket, fn: () => T | Promise<T>): Promise<T> {
    const { deps, principal } = this.ctx;
    const d = await deps.limiter.consume(tokenRateKey(principal.tokenId, bucket), rateFor(principal, bucket), bucket);
    if (!d.allowed) throw new ToolFailure("rate_limited", `rate limit of ${d.limit} ${bucket} per minute reached; retry in a minute`);
    if (bucket !== "reads" && deps.config.limitProfile !== "unlimited" && (await getWorkspace(deps, principal.workspaceId)).plan === "free") {
      throw new ToolFailure("plan_required", "agent writes need a paid plan; reading works on every plan");
    }
    try {
      return await fn();
    } catch (e) {
      if (e instanceof ValidationFailed) throw validationFailure(e.details) ?? new ToolFailure(e.code, e.message);
      if (e instanceof AppError) throw new ToolFailure(e.code, e.message);
      throw e;
    }
  }

  listNotes(a: { limit?: number; offset?: number; folder_id?: string; query?: string }) {
    return this.run("reads", async () => {
      const { items, total } =
        a.query === undefined
          ? await notes.listNotes({ ctx: this.ctx, filter: { folderId: a.folder_id }, page: pageFrom(a) })
          : await searchNotes({ ctx: this.ctx, q: a.query, folderId: a.folder_id, page: pageFrom(a) });
      return { notes: items, total };
    });
  }
  readNote(a: { id: string }) {
    return this.run("reads", () => notes.getNote({ ctx: this.ctx, id: a.id }));
  }
  createNote(a: { title: string; plain_body: string; folder_id?: string }) {
    return this.run("writes", async () => (await notes.createNote({ ctx: this.ctx, input: a })).body);
  }
  appendNote(a: { filename: string; text: string }) {
    return this.run("appends", async () => (await appendByFilename({ ctx: this.ctx, filename: a.filename, text: a.text })).body);
  }
  updateNote(a: { id: string; title?: string; plain_body?: string }) {
    return this.run("writes", async () => (await notes.updateNote({ ctx: this.ctx, id: a.id, input: { title: a.title, plain_body: a.plain_body } })).body);
  }
  deleteNote(a: { id: string }) {
    return this.run("writes", async () => (await notes.deleteNote({ ctx: this.ctx, id: a.id })).body);
  }
  moveNote(a: { id: string; folder_id: string | null }) {
    return this.run("writes", async () => (await notes.updateNote({ ctx: this.ctx, id: a.id, input: { folder_id: a.folder_id } })).body);
  }
  listFolders() {
    return this.run("reads", async () => ({ folders: (await folders.listFolders({ ctx: this.ctx, page: pageFrom({ limit: 200 }) })).items }));
  }
  createFolder(a: { name: string }) {
    return this.run("writes", async () => (await folders.createFolder({ ctx: this.ctx, name: a.name })).body);
  }
  renameFolder(a: { id: string; name: string }) {
    return this.run("writes", async () => (await folders.renameFolder({ ctx: this.ctx, id: a.id, name: a.name })).body);
  }
  deleteFolder(a: { id: string }) {
    return this.run("writes", async () => (await folders.deleteFolder({ ctx: this.ctx, id: a.id })).body);
  }
  streamLines(by: NoteRef, last: number) {
    return this.run("reads", async () => {
      const page = await readLines(this.ctx.deps, await readableStream(this.ctx, by), { last });
      return page.lines.map(({ text, at }) => ({ text, at }));
    });
  }

  /**
   * A subscription wakes with the process's followers (follow.ts): on this process's commits at
   * once and, while the session's event stream is open (a follow of its own), on other instances'
   * within 2 s. A wake that brought no new line (another process wrote elsewhere) is not passed on.
   */
  follow(by: NoteRef, changed: () => void) {
    return this.run("reads", async () => {
      const { deps } = this.ctx;
      const note = await readableStream(this.ctx, by);
      let end = await endOf(deps, note.id);
      const recheck = async () => {
        const now = await endOf(deps, note.id);
        if (now.seq === end.seq && now.line === end.line) return;
        end = now;
        changed();
      };
      return followers(deps).lines.watch(note.id, () => void recheck().catch(() => {}));
    });
  }
}
