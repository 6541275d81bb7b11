import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import pkg from "../../package.json";
import { ToolFailure, type Capabilities, type NotesBackend } from "./backend";

const INSTRUCTIONS = `notestream stores plain-text notes. Streams are append-only notes addressed by an exact filename:
append_note adds a line (creating the stream on the first write) and is the way to record events, digests and
summaries. Editable notes are created and changed with create_note and update_note. Notes live in folders.
Ids look like note_… and fold_…. Errors start with a code such as not_found, cap_exceeded or plan_required.`;

function ok(result: unknown) {
  return { content: [{ type: "text" as const, text: JSON.stringify(result, null, 2) }] };
}

function failed(e: unknown) {
  if (e instanceof ToolFailure) return { isError: true, content: [{ type: "text" as const, text: `${e.code}: ${e.message}` }] };
  return { isError: true, content: [{ type: "text" as const, text: `internal_error: ${(e as Error)?.message ?? String(e)}` }] };
}

async function call(fn: () => Promise<unknown>) {
  try {
    return ok(await fn());
  } catch (e) {
    return failed(e);
  }
}

const id = (what: string) => z.string().min(1).describe(what);

/**
 * The eleven tools, over a backend (services for the hosted endpoint, REST for stdio). A
 * connection sees only what its token may do: read tools need `read`, write tools `write`,
 * append_note `append` or `write`; a token pinned to one note sees that note's tools only.
 */
export function buildMcpServer(backend: NotesBackend, caps: Capabilities): McpServer {
  const server = new McpServer({ name: "notestream", version: pkg.version }, { instructions: INSTRUCTIONS });
  const can = (s: "read" | "write" | "append") => caps.scopes.has(s) || (s === "append" && caps.scopes.has("write"));
  const whole = caps.noteId === null; // workspace-wide tools need an unpinned token

  if (can("read") && whole) {
    server.registerTool(
      "list_notes",
      {
        title: "List notes",
        description: "Lists notes, most recently updated first, without their text (use read_note for that). Returns { notes, total }.",
        inputSchema: {
          limit: z.number().int().min(1).max(200).optional().describe("How many to return (default 50, at most 200)"),
          offset: z.number().int().min(0).optional().describe("How many to skip, for paging"),
          folder_id: z.string().optional().describe("Only notes in this folder (fold_…)"),
        },
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      (a) => call(() => backend.listNotes(a)),
    );
  }
  if (can("read")) {
    server.registerTool(
      "read_note",
      {
        title: "Read a note",
        description: "Reads one note with its full plain text (plain_body). Streams return every line appended so far.",
        inputSchema: { id: id("The note's id, note_…") },
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      (a) => call(() => backend.readNote(a)),
    );
  }
  if (can("read") && whole) {
    server.registerTool(
      "list_folders",
      {
        title: "List folders",
        description: "Lists the account's folders with how many notes each holds. Returns { folders }.",
        inputSchema: {},
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      () => call(() => backend.listFolders()),
    );
  }
  if (can("append")) {
    server.registerTool(
      "append_note",
      {
        title: "Append a line to a stream",
        description:
          "Appends text to the stream with this exact filename, creating the stream on the first write. A final newline is added; " +
          "control characters are removed; no timestamp is added (include one in the text if you want it). Use it to record events and summaries.",
        inputSchema: {
          filename: z.string().min(1).describe("The stream's exact filename, e.g. deploys.log (at most 200 bytes, no slashes)"),
          text: z.string().min(1).describe("The text to append, usually one line"),
        },
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      },
      (a) => call(() => backend.appendNote(a)),
    );
  }
  if (can("write")) {
    server.registerTool(
      "update_note",
      {
        title: "Update a note",
        description: "Changes an editable note's title and/or replaces its plain text. Streams can only be retitled (append to them instead). Earlier versions are kept as snapshots.",
        inputSchema: {
          id: id("The note's id, note_…"),
          title: z.string().max(200).optional().describe("New title, at most 200 characters"),
          plain_body: z.string().optional().describe("The complete new text of the note"),
        },
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      },
      (a) => call(() => backend.updateNote(a)),
    );
    server.registerTool(
      "delete_note",
      {
        title: "Delete a note",
        description: "Deletes a note and its history for good.",
        inputSchema: { id: id("The note's id, note_…") },
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      },
      (a) => call(() => backend.deleteNote(a)),
    );
  }
  if (can("write") && whole) {
    server.registerTool(
      "create_note",
      {
        title: "Create an editable note",
        description: "Creates an editable plain-text note. For event logs, prefer append_note on a stream. Returns the note with its id.",
        inputSchema: {
          title: z.string().max(200).describe("Title, at most 200 characters"),
          plain_body: z.string().describe("The note's text"),
          folder_id: z.string().optional().describe("Put it in this folder (fold_…)"),
        },
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      },
      (a) => call(() => backend.createNote(a)),
    );
    server.registerTool(
      "move_note",
      {
        title: "Move a note to a folder",
        description: "Moves a note into a folder, or out of any folder with folder_id null.",
        inputSchema: { id: id("The note's id, note_…"), folder_id: z.string().nullable().describe("The folder's id (fold_…), or null to unfile") },
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      },
      (a) => call(() => backend.moveNote(a)),
    );
    server.registerTool(
      "create_folder",
      {
        title: "Create a folder",
        description: "Creates a folder. Names are 1 to 80 characters and unique in the account regardless of case.",
        inputSchema: { name: z.string().min(1).max(80).describe("Folder name") },
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      },
      (a) => call(() => backend.createFolder(a)),
    );
    server.registerTool(
      "rename_folder",
      {
        title: "Rename a folder",
        description: "Renames a folder; the new name must be 1 to 80 characters and unique in the account regardless of case.",
        inputSchema: { id: id("The folder's id, fold_…"), name: z.string().min(1).max(80).describe("New name") },
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      },
      (a) => call(() => backend.renameFolder(a)),
    );
    server.registerTool(
      "delete_folder",
      {
        title: "Delete a folder",
        description: "Deletes a folder. Its notes are kept and become unfiled.",
        inputSchema: { id: id("The folder's id, fold_…") },
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      },
      (a) => call(() => backend.deleteFolder(a)),
    );
  }
  return server;
}
