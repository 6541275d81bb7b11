import { McpServer, ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { z } from "zod";
import pkg from "../../package.json";
import { ToolFailure, problemText, type Capabilities, type NotesBackend } from "./backend";
import { registerPrompts } from "./prompts";
import { registerResources } from "./resources";
import type { StreamSubscriptions } from "./subscriptions";
import { TOOLS, type Tool } from "./tools";
import { resourceLink, uriOf, type NoteFields } from "./uris";

const INSTRUCTIONS = `notestream stores plain-text notes. Streams are append-only notes addressed by an exact filename:
append_note adds a line (creating the stream on the first write) and is the way to record events, digests and
summaries. Editable notes are created and changed with create_note and update_note. Notes live in folders.
Ids look like note_… and fold_…. Errors start with a code such as not_found, cap_exceeded or plan_required.`;

/**
 * Both forms: structured for clients that read outputSchema, the same JSON as text for older ones
 * (Claude Desktop reads only the text, Claude Code may read only the structure). A note named by
 * the result gets its resource address in both, and a resource_link a client can open or attach.
 */
function ok(result: unknown, links?: Tool["links"]) {
  let data = result as Record<string, unknown>;
  let named: NoteFields[] = [];
  if (links === "note") {
    data = { ...data, uri: uriOf(data as unknown as NoteFields) };
    named = [data as unknown as NoteFields];
  } else if (links === "notes") {
    named = (data.notes as NoteFields[]).map((n) => ({ ...n, uri: uriOf(n) }));
    data = { ...data, notes: named };
  }
  return { content: [{ type: "text" as const, text: JSON.stringify(data, null, 2) }, ...named.map(resourceLink)], structuredContent: data };
}

function failed(e: unknown) {
  if (e instanceof ToolFailure) return { isError: true, content: [{ type: "text" as const, text: `${e.code}: ${e.message}` }] };
  return { isError: true, content: [{ type: "text" as const, text: `internal_error: ${(e as Error)?.message ?? String(e)}` }] };
}

async function call(fn: () => Promise<unknown>, links?: Tool["links"]) {
  try {
    return ok(await fn(), links);
  } catch (e) {
    return failed(e);
  }
}

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
export function buildMcpServer(backend: NotesBackend, caps: Capabilities, subscriptions: StreamSubscriptions | null = null): McpServer {
  const server = new McpServer({ name: "notestream", version: pkg.version }, { instructions: INSTRUCTIONS });
  const run = async (t: Tool, raw: Record<string, unknown> | undefined) => {
    const refused = refusal(t, caps);
    if (refused) return failed(refused);
    const args = parseArguments(t, raw);
    if (args instanceof ToolFailure) return failed(args);
    return call(() => t.run(backend, args), t.links);
  };
  for (const t of TOOLS) {
    if (refusal(t, caps)) continue;
    const { title, description, input: inputSchema, output: outputSchema, annotations } = t;
    server.registerTool(t.name, { title, description, inputSchema: z.object(inputSchema), outputSchema, annotations }, (a: Record<string, unknown>) => run(t, a));
  }
  // registerTool advertises tools.listChanged, a notification no connection here ever sends (a
  // token's tools are fixed): say what is true.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  // Resources and prompts are notes read: a token that may not read is offered neither.
  if (caps.scopes.has("read")) {
    registerResources(server, backend, caps, subscriptions);
    registerPrompts(server, backend, caps);
  }
  server.server.setRequestHandler("tools/call", async (request) => {
    const t = TOOLS.find((x) => x.name === request.params.name);
    // No token could call it: a protocol error, as the MCP specification has it for unknown tools.
    if (!t) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    return run(t, request.params.arguments);
  });
  return server;
}
