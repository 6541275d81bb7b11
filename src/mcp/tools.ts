// The table of the tools MCP clients see: names, scopes, descriptions and schemas, with the
// REST API's limits (the same constants its validation uses). server.ts lists and dispatches them.
import { z } from "zod";
import { FILENAME_MAX_BYTES } from "../lib/filename";
import { DEFAULT_LIMIT, MAX_LIMIT } from "../lib/pagination";
import { FOLDER_NAME_MAX_CHARS, TITLE_MAX_CHARS } from "../lib/text";
import { MAX_QUERY_CHARS } from "../modules/search/terms";
import type { Scope } from "../principal";
import type { NotesBackend } from "./backend";

const id = (what: string) => z.string().min(1).describe(what);

// What the tools return, as output schemas. Loose objects: the records carry every field of the
// REST API's records, and a field added there must not make a client's validation fail.
const NoteOut = z.looseObject({
  id: z.string(),
  kind: z.enum(["stream", "editable"]),
  format: z.enum(["plain", "rich"]),
  filename: z.string().nullable(),
  title: z.string(),
  folder_id: z.string().nullable(),
  byte_size: z.number().int(),
  updated_at: z.string(),
});
const NoteWithBody = NoteOut.extend({
  plain_body: z.string().describe("The note's text; with last_lines, only its newest lines"),
  lines_returned: z.number().int().optional().describe("With last_lines: how many lines plain_body holds"),
  truncated: z.boolean().optional().describe("With last_lines: true when older lines were left out (byte_size is the whole note's)"),
});
const FolderOut = z.looseObject({ id: z.string(), name: z.string(), note_count: z.number().int() });
const DeletedOut = z.looseObject({ id: z.string(), deleted: z.literal(true) });
const AppendOut = z.looseObject({ id: z.string(), filename: z.string().nullable(), created: z.boolean(), byte_size: z.number().int(), bytes_remaining: z.number().int().nullable() });

/** The newest `n` lines of a note's text (a stream's lines end with LF). */
function lastLines(note: Record<string, unknown>, n: number): Record<string, unknown> {
  const body = typeof note.plain_body === "string" ? note.plain_body : "";
  const lines = body.endsWith("\n") ? body.slice(0, -1).split("\n") : body.split("\n");
  if (body === "") return { ...note, lines_returned: 0, truncated: false };
  const kept = lines.slice(-n);
  return { ...note, plain_body: kept.join("\n") + (body.endsWith("\n") ? "\n" : ""), lines_returned: kept.length, truncated: kept.length < lines.length };
}

export type Shape = Record<string, z.ZodType>;
type Annotations = { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };

export interface Tool {
  name: string;
  /** The scope a token needs (`write` covers `append`). */
  scope: Scope;
  /** Set on tools that act on the whole workspace, closed to a token pinned to one note: it ends "a pinned token cannot …". */
  workspaceAction?: string;
  title: string;
  description: string;
  input: Shape;
  output: z.ZodType;
  annotations: Annotations;
  /** Its result names a note ("note") or lists notes ("notes"): each gets its resource address and a resource_link. */
  links?: "note" | "notes";
  run: (backend: NotesBackend, args: any) => Promise<unknown>;
}

/** Keeps each tool's `run` typed by its own input schema while the table holds them all. */
function tool<S extends Shape>(
  t: Omit<Tool, "input" | "run"> & { input: S; run: (backend: NotesBackend, args: z.infer<z.ZodObject<S>>) => Promise<unknown> },
): Tool {
  return t;
}

/** The eleven tools: read tools need `read`, write tools `write`, append_note `append` or `write`. */
export const TOOLS: Tool[] = [
  tool({
    name: "list_notes",
    scope: "read",
    workspaceAction: "list notes",
    title: "List notes",
    description:
      "Lists notes, most recently updated first, without their text (use read_note for that). Returns { notes, total }. " +
      "With query: searches titles and text instead (every word, whole words, any case or accents), best match first, " +
      "each note with a snippet of the matching text, its matched words between ** and **. " +
      "A search weighs at most the 1,000 newest matching texts of each kind (stream lines, note titles and bodies): " +
      "for a common word, add another word or a folder_id to reach older matches; total is then a lower bound.",
    input: {
      limit: z.number().int().min(1).max(MAX_LIMIT).optional().describe(`How many to return (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT})`),
      offset: z.number().int().min(0).optional().describe("How many to skip, for paging"),
      folder_id: z.string().optional().describe("Only notes in this folder (fold_…)"),
      query: z.string().min(1).optional().describe(`Words to search for in titles and text (full-text search; at most ${MAX_QUERY_CHARS} characters)`),
    },
    output: z.object({ notes: z.array(NoteOut.extend({ snippet: z.string().optional().describe("With query: the matching passage") })), total: z.number().int() }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    links: "notes",
    run: (b, a) => b.listNotes(a),
  }),
  tool({
    name: "read_note",
    scope: "read",
    title: "Read a note",
    description:
      "Reads one note with its plain text (plain_body). Streams return every line appended so far unless last_lines is given: " +
      "then only the newest lines, with byte_size still the whole stream's, so a long stream does not fill your context.",
    input: {
      id: id("The note's id, note_…"),
      last_lines: z.number().int().min(1).max(10_000).optional().describe("Only the newest N lines (1 to 10000)"),
    },
    output: NoteWithBody,
    annotations: { readOnlyHint: true, openWorldHint: false },
    links: "note",
    run: async (b, a) => {
      const note = await b.readNote({ id: a.id });
      return a.last_lines === undefined ? note : lastLines(note, a.last_lines);
    },
  }),
  tool({
    name: "list_folders",
    scope: "read",
    workspaceAction: "list folders",
    title: "List folders",
    description: "Lists the account's folders with how many notes each holds. Returns { folders }.",
    input: {},
    output: z.object({ folders: z.array(FolderOut) }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: (b) => b.listFolders(),
  }),
  tool({
    name: "append_note",
    scope: "append",
    title: "Append a line to a stream",
    description:
      "Appends text to the stream with this exact filename, creating the stream on the first write. A final newline is added; " +
      "control characters are removed; no timestamp is added (include one in the text if you want it). Use it to record events and summaries.",
    input: {
      filename: z.string().min(1).describe(`The stream's exact filename, e.g. deploys.log (at most ${FILENAME_MAX_BYTES} bytes, no slashes)`),
      text: z.string().min(1).describe("The text to append, usually one line"),
    },
    output: AppendOut,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    links: "note",
    run: (b, a) => b.appendNote(a),
  }),
  tool({
    name: "update_note",
    scope: "write",
    title: "Update a note",
    description: "Changes an editable note's title and/or replaces its plain text. Streams can only be retitled (append to them instead). Earlier versions are kept as snapshots.",
    input: {
      id: id("The note's id, note_…"),
      title: z.string().max(TITLE_MAX_CHARS).optional().describe(`New title, at most ${TITLE_MAX_CHARS} characters`),
      plain_body: z.string().optional().describe("The complete new text of the note"),
    },
    output: NoteOut,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    links: "note",
    run: (b, a) => b.updateNote(a),
  }),
  tool({
    name: "delete_note",
    scope: "write",
    title: "Delete a note",
    description: "Moves a note to the trash: restorable for 30 days (POST /api/v1/notes/{id}/restore or the web app's Trash), then deleted for good.",
    input: { id: id("The note's id, note_…") },
    output: DeletedOut,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: (b, a) => b.deleteNote(a),
  }),
  tool({
    name: "create_note",
    scope: "write",
    workspaceAction: "create notes",
    title: "Create an editable note",
    description: "Creates an editable plain-text note. For event logs, prefer append_note on a stream. Returns the note with its id.",
    input: {
      title: z.string().max(TITLE_MAX_CHARS).describe(`Title, at most ${TITLE_MAX_CHARS} characters`),
      plain_body: z.string().describe("The note's text"),
      folder_id: z.string().optional().describe("Put it in this folder (fold_…)"),
    },
    output: NoteOut,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    links: "note",
    run: (b, a) => b.createNote(a),
  }),
  tool({
    name: "move_note",
    scope: "write",
    workspaceAction: "move notes between folders",
    title: "Move a note to a folder",
    description: "Moves a note into a folder, or out of any folder with folder_id null.",
    input: { id: id("The note's id, note_…"), folder_id: z.string().nullable().describe("The folder's id (fold_…), or null to unfile") },
    output: NoteOut,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    links: "note",
    run: (b, a) => b.moveNote(a),
  }),
  tool({
    name: "create_folder",
    scope: "write",
    workspaceAction: "manage folders",
    title: "Create a folder",
    description: `Creates a folder. Names are 1 to ${FOLDER_NAME_MAX_CHARS} characters and unique in the account regardless of case.`,
    input: { name: z.string().min(1).max(FOLDER_NAME_MAX_CHARS).describe("Folder name") },
    output: FolderOut,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: (b, a) => b.createFolder(a),
  }),
  tool({
    name: "rename_folder",
    scope: "write",
    workspaceAction: "manage folders",
    title: "Rename a folder",
    description: `Renames a folder; the new name must be 1 to ${FOLDER_NAME_MAX_CHARS} characters and unique in the account regardless of case.`,
    input: { id: id("The folder's id, fold_…"), name: z.string().min(1).max(FOLDER_NAME_MAX_CHARS).describe("New name") },
    output: FolderOut,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (b, a) => b.renameFolder(a),
  }),
  tool({
    name: "delete_folder",
    scope: "write",
    workspaceAction: "manage folders",
    title: "Delete a folder",
    description: "Deletes a folder. Its notes are kept and become unfiled.",
    input: { id: id("The folder's id, fold_…") },
    output: DeletedOut,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: (b, a) => b.deleteFolder(a),
  }),
];
