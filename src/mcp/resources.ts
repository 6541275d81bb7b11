// Notes as MCP resources: the templates, the caller's notes listed page by page, a note read as
// text/plain, completions of filenames and ids, and subscriptions to streams. The same backend as
// the tools, so the same owner scoping, pin and read scope.
import type { McpServer } from "@modelcontextprotocol/server";
import { MAX_LIMIT } from "../lib/pagination";
import { MAX_LINES } from "../modules/streams/lines";
import { ProtocolError, resourceNotFound, RPC, ToolFailure, type Capabilities, type Line, type NotesBackend } from "./backend";
import type { StreamSubscriptions } from "./subscriptions";
import { NOTE_TEMPLATE, refOf, STREAM_TEMPLATE, uriOf, type NoteFields } from "./uris";

/** Resources per page of resources/list. */
export const RESOURCES_PAGE = 50;
/** The most completions one answer offers (the specification's own bound). */
const MAX_COMPLETIONS = 100;

/**
 * A backend failure as a protocol error whose message starts with its code, as the tools' errors
 * do; a note that is not there, when a resource was asked for by `uri`, as resource not found.
 */
export function protocolError(e: unknown, uri?: string): ProtocolError {
  if (e instanceof ProtocolError) return e;
  if (!(e instanceof ToolFailure)) return new ProtocolError(RPC.internal, `internal_error: ${(e as Error)?.message ?? String(e)}`);
  const message = `${e.code}: ${e.message}`;
  if (e.code === "not_found" && uri !== undefined) return resourceNotFound(uri, message);
  return new ProtocolError(e.code === "not_found" || e.code === "validation_failed" || e.code === "insufficient_scope" ? RPC.invalidParams : RPC.internal, message);
}

async function guarded<T>(fn: () => Promise<T>, uri?: string): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw protocolError(e, uri);
  }
}

/** Lines as a stream's text: each ends with LF, as the stream holds them. */
export const textOfLines = (lines: Line[]): string => lines.map((l) => `${l.text}\n`).join("");

/** The notes a caller may see, newest first: a token pinned to one note sees that note only. */
export async function callerNotes(backend: NotesBackend, caps: Capabilities, page: { limit: number; offset?: number }): Promise<{ notes: NoteFields[]; total: number }> {
  if (caps.noteId !== null) {
    const note = (await backend.readNote({ id: caps.noteId })) as unknown as NoteFields;
    return { notes: (page.offset ?? 0) === 0 ? [note] : [], total: 1 };
  }
  const { notes, total } = await backend.listNotes(page);
  return { notes: notes as unknown as NoteFields[], total };
}

function offsetOf(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const n = /^[0-9]{1,9}$/.test(cursor) ? Number(cursor) : NaN;
  if (!Number.isSafeInteger(n)) throw new ProtocolError(RPC.invalidParams, "validation_failed: cursor is not one this server gave out");
  return n;
}

/** A note's text as a resource: a stream's newest 1,000 lines, an editable note's plain text. */
async function readResource(backend: NotesBackend, uri: string) {
  const ref = refOf(uri);
  if (!ref) throw resourceNotFound(uri, `not_found: ${uri} is not a notestream resource (${STREAM_TEMPLATE} or ${NOTE_TEMPLATE})`);
  let text: string;
  if ("filename" in ref) text = textOfLines(await backend.streamLines(ref, MAX_LINES));
  else {
    const note = await backend.readNote(ref);
    text = note.kind === "stream" ? textOfLines(await backend.streamLines(ref, MAX_LINES)) : String(note.plain_body ?? "");
  }
  return { contents: [{ uri, mimeType: "text/plain", text }] };
}

/** The caller's filenames (streams) or ids (editable notes) that start with `prefix`. */
export async function complete(backend: NotesBackend, caps: Capabilities, what: "filename" | "id", prefix: string) {
  const { notes } = await callerNotes(backend, caps, { limit: MAX_LIMIT });
  const values = notes
    .filter((n) => (what === "filename" ? n.kind === "stream" : n.kind === "editable"))
    .map((n) => (what === "filename" ? (n.filename ?? "") : n.id))
    .filter((v) => v !== "" && v.startsWith(prefix));
  return { completion: { values: values.slice(0, MAX_COMPLETIONS), total: values.length, hasMore: values.length > MAX_COMPLETIONS } };
}

/**
 * Registers the resources on a server whose token may read. `subscriptions` is null where the
 * connection cannot carry notifications (a hosted request outside a session of this instance).
 */
export function registerResources(server: McpServer, backend: NotesBackend, caps: Capabilities, subscriptions: StreamSubscriptions | null): void {
  server.server.registerCapabilities({ resources: { subscribe: true, listChanged: false }, completions: {} });
  const s = server.server;
  s.setRequestHandler("resources/templates/list", async () => ({
    resourceTemplates: [
      { uriTemplate: STREAM_TEMPLATE, name: "stream", title: "A stream, by filename", description: `The stream's newest ${MAX_LINES} lines`, mimeType: "text/plain" },
      { uriTemplate: NOTE_TEMPLATE, name: "note", title: "An editable note, by id", description: "The note's plain text", mimeType: "text/plain" },
    ],
  }));
  s.setRequestHandler("resources/list", (request) =>
    guarded(async () => {
      const offset = offsetOf(request.params?.cursor);
      const { notes, total } = await callerNotes(backend, caps, { limit: RESOURCES_PAGE, offset });
      const resources = notes.map((n) => ({ uri: uriOf(n), name: n.filename ?? n.title ?? n.id, title: n.title, mimeType: "text/plain", size: n.byte_size }));
      return { resources, ...(offset + notes.length < total && notes.length > 0 ? { nextCursor: String(offset + notes.length) } : {}) };
    }),
  );
  s.setRequestHandler("resources/read", (request) => guarded(() => readResource(backend, request.params.uri), request.params.uri));
  s.setRequestHandler("completion/complete", (request) =>
    guarded(async () => {
      const { ref, argument } = request.params;
      const what =
        ref.type === "ref/resource"
          ? ref.uri === STREAM_TEMPLATE && argument.name === "filename"
            ? "filename"
            : ref.uri === NOTE_TEMPLATE && argument.name === "id"
              ? "id"
              : null
          : argument.name === "filename" // the prompts' one argument that names a note
            ? "filename"
            : null;
      return what ? complete(backend, caps, what, argument.value) : { completion: { values: [], total: 0, hasMore: false } };
    }),
  );
  s.setRequestHandler("resources/subscribe", (request) =>
    guarded(async () => {
      if (!subscriptions) throw new ProtocolError(RPC.invalidRequest, "unavailable: this request is not in a session this server holds; subscribe within the session that opened the event stream (GET /mcp)");
      await subscriptions.subscribe(backend, request.params.uri);
      return {};
    }),
  );
  s.setRequestHandler("resources/unsubscribe", async (request) => {
    subscriptions?.unsubscribe(request.params.uri);
    return {};
  });
}
