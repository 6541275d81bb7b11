// Over 250 lines on purpose: most of it is the table of the eleven tools (names, scopes,
// descriptions, schemas), data that reads best in one place; the dispatch is the rest.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallToolRequestSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import pkg from "../../package.json";
import type { Scope } from "../principal";
import { ToolFailure, problemText, type Capabilities, type NotesBackend } from "./backend";

const INSTRUCTIONS = `notestream stores plain-text notes. Streams are append-only notes addressed by an exact filename:
append_note adds a line (creating the stream on the first write) and is the way to record events, digests and
summaries. Editable notes are created and changed with create_note and update_note. Notes live in folders.
Ids look like note_… and fold_…. Errors start with a code such as not_found, cap_exceeded or plan_required.`;

/** Both forms: structured for clients that read outputSchema, the same JSON as text for older ones. */
function ok(result: unknown) {
  return { content: [{ type: "text" as const, text: JSON.stringify(result, null, 2) }], structuredContent: result as Record<string, unknown> };
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

type Shape = Record<string, z.ZodType>;
type Annotations = { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };

interface Tool {
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
  run: (backend: NotesBackend, args: any) => Promise<unknown>;
}

/** Keeps each tool's `run` typed by its own input schema while the table holds them all. */
function tool<S extends Shape>(
  t: Omit<Tool, "input" | "run"> & { input: S; run: (backend: NotesBackend, args: z.infer<z.ZodObject<S>>) => Promise<unknown> },
): Tool {
  return t;
}

/** The eleven tools: read tools need `read`, write tools `write`, append_note `append` or `write`. */
const TOOLS: Tool[] = [
  tool({
    name: "list_notes",
    scope: "read",
    workspaceAction: "list notes",
    title: "List notes",
    description:
      "Lists notes, most recently updated first, without their text (use read_note for that). Returns { notes, total }. " +
      "With query: searches titles and text instead (every word, whole words, any case or accents), best match first, " +
      "each note with a snippet of the matching text, its matched words between ** and **.",
    input: {
      limit: z.number().int().min(1).max(200).optional().describe("How many to return (default 50, at most 200)"),
      offset: z.number().int().min(0).optional().describe("How many to skip, for paging"),
      folder_id: z.string().optional().describe("Only notes in this folder (fold_…)"),
      query: z.string().min(1).optional().describe("Words to search for in titles and text (full-text search; at most 200 characters)"),
    },
    output: z.object({ notes: z.array(NoteOut.extend({ snippet: z.string().optional().describe("With query: the matching passage") })), total: z.number().int() }),
    annotations: { readOnlyHint: true, openWorldHint: false },
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
      filename: z.string().min(1).describe("The stream's exact filename, e.g. deploys.log (at most 200 bytes, no slashes)"),
      text: z.string().min(1).describe("The text to append, usually one line"),
    },
    output: AppendOut,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: (b, a) => b.appendNote(a),
  }),
  tool({
    name: "update_note",
    scope: "write",
    title: "Update a note",
    description: "Changes an editable note's title and/or replaces its plain text. Streams can only be retitled (append to them instead). Earlier versions are kept as snapshots.",
    input: {
      id: id("The note's id, note_…"),
      title: z.string().max(200).optional().describe("New title, at most 200 characters"),
      plain_body: z.string().optional().describe("The complete new text of the note"),
    },
    output: NoteOut,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
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
      title: z.string().max(200).describe("Title, at most 200 characters"),
      plain_body: z.string().describe("The note's text"),
      folder_id: z.string().optional().describe("Put it in this folder (fold_…)"),
    },
    output: NoteOut,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
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
    run: (b, a) => b.moveNote(a),
  }),
  tool({
    name: "create_folder",
    scope: "write",
    workspaceAction: "manage folders",
    title: "Create a folder",
    description: "Creates a folder. Names are 1 to 80 characters and unique in the account regardless of case.",
    input: { name: z.string().min(1).max(80).describe("Folder name") },
    output: FolderOut,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: (b, a) => b.createFolder(a),
  }),
  tool({
    name: "rename_folder",
    scope: "write",
    workspaceAction: "manage folders",
    title: "Rename a folder",
    description: "Renames a folder; the new name must be 1 to 80 characters and unique in the account regardless of case.",
    input: { id: id("The folder's id, fold_…"), name: z.string().min(1).max(80).describe("New name") },
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

/** Why this connection may not call the tool, in the REST API's words for the same refusal; null when it may. */
function refusal(t: Tool, caps: Capabilities): ToolFailure | null {
  const has = caps.scopes.has(t.scope) || (t.scope === "append" && caps.scopes.has("write"));
  if (!has) return new ToolFailure("insufficient_scope", `this token lacks the ${t.scope} scope`);
  if (t.workspaceAction && caps.noteId !== null) return new ToolFailure("insufficient_scope", `a token pinned to one note cannot ${t.workspaceAction}`);
  return null;
}

/** The type a field is advertised with in tools/list: zod calls an integer given a string "expected number". */
function advertisedType(schema: z.ZodType | undefined, expected: string): string {
  let s = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap() as z.ZodType;
  return (s instanceof z.ZodNumber && s.isInt) || expected === "int" ? "integer" : expected;
}

/** A zod issue in the REST API's wording ("is required", "expected string", "must be at most 80 characters"). */
function issueProblem(t: Tool, issue: z.core.$ZodIssue, args: Record<string, unknown>): string {
  const key = String(issue.path[0] ?? "");
  switch (issue.code) {
    case "invalid_type":
      if (args[key] === undefined) return "is required";
      return `expected ${advertisedType(t.input[key], issue.expected)}`;
    case "too_big":
      return issue.origin === "string" ? `must be at most ${issue.maximum} characters` : `must be at most ${issue.maximum}`;
    case "too_small":
      if (issue.origin === "string") return Number(issue.minimum) === 1 ? "must not be empty" : `must be at least ${issue.minimum} characters`;
      return `must be at least ${issue.minimum}`;
    default:
      return "is invalid";
  }
}

/** The arguments as the tool's schema reads them, or a validation_failed naming each field once. */
function parseArguments(t: Tool, raw: Record<string, unknown> | undefined): Record<string, unknown> | ToolFailure {
  const args = raw ?? {};
  const parsed = z.object(t.input).safeParse(args);
  if (parsed.success) return parsed.data;
  const byField = new Map<string, string>();
  for (const issue of parsed.error.issues) {
    const field = issue.path.map(String).join(".") || "arguments";
    if (!byField.has(field)) byField.set(field, problemText(field, issueProblem(t, issue, args)));
  }
  return new ToolFailure("validation_failed", [...byField.values()].join("; "));
}

/**
 * The eleven tools, over a backend (services for the hosted endpoint, REST for stdio). A
 * connection lists only what its token may do; a token pinned to one note lists that note's tools
 * only. Calls are dispatched here rather than by the SDK, whose own dispatch answers a bad argument
 * with "MCP error -32602: Input validation error: …" and a hidden tool with "not found": API.md
 * wants every tool error to start with its code, and a refused call to say why.
 */
export function buildMcpServer(backend: NotesBackend, caps: Capabilities): McpServer {
  const server = new McpServer({ name: "notestream", version: pkg.version }, { instructions: INSTRUCTIONS });
  const run = async (t: Tool, raw: Record<string, unknown> | undefined) => {
    const refused = refusal(t, caps);
    if (refused) return failed(refused);
    const args = parseArguments(t, raw);
    if (args instanceof ToolFailure) return failed(args);
    return call(() => t.run(backend, args));
  };
  for (const t of TOOLS) {
    if (refusal(t, caps)) continue;
    const { title, description, input: inputSchema, output: outputSchema, annotations } = t;
    server.registerTool(t.name, { title, description, inputSchema, outputSchema, annotations }, (a: Record<string, unknown>) => run(t, a));
  }
  // registerTool advertises tools.listChanged, a notification no connection here ever sends (the
  // hosted endpoint is stateless, stdio's tools are fixed at start): say what is true.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  server.server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const t = TOOLS.find((x) => x.name === request.params.name);
    // No token could call it: a protocol error, as the MCP specification has it for unknown tools.
    if (!t) throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    return run(t, request.params.arguments);
  });
  return server;
}
