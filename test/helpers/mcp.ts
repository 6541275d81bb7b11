import { expect } from "bun:test";

/**
 * The client methods the shared checks call. The v1 SDK's Client (`@modelcontextprotocol/sdk`) and
 * the v2 SDK's (`@modelcontextprotocol/client`) both have them, on either revision, so one check
 * covers every client a user may hold; what differs by revision (subscriptions) is kept apart.
 */
export interface McpClient {
  listTools(): Promise<{ tools: { name: string; description?: string; annotations?: object; outputSchema?: { [key: string]: unknown } }[] }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  listResources(params?: { cursor?: string }): Promise<{ resources: { uri: string; name: string; title?: string; mimeType?: string; size?: number }[]; nextCursor?: string }>;
  listResourceTemplates(): Promise<{ resourceTemplates: { uriTemplate: string }[] }>;
  readResource(params: { uri: string }): Promise<{ contents: unknown[] }>;
  complete(params: {
    ref: { type: "ref/resource"; uri: string } | { type: "ref/prompt"; name: string };
    argument: { name: string; value: string };
  }): Promise<{ completion: { values: string[] } }>;
  listPrompts(): Promise<{ prompts: { name: string }[] }>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<{ messages: { role: string; content: unknown }[] }>;
}

export const ALL_TOOLS = [
  "append_note",
  "create_folder",
  "create_note",
  "delete_folder",
  "delete_note",
  "list_folders",
  "list_notes",
  "move_note",
  "read_note",
  "rename_folder",
  "update_note",
];

type ToolResult = { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: Record<string, unknown> };

export function textOf(r: unknown): string {
  return ((r as ToolResult).content[0]?.text ?? "") as string;
}

/** Calls a tool and parses its JSON result; fails the test on a tool error. */
export async function tool<T = any>(client: McpClient, name: string, args: Record<string, unknown> = {}): Promise<T> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  if (r.isError) throw new Error(`${name} failed: ${textOf(r)}`);
  // The SDK's client has already checked structuredContent against the tool's outputSchema; the
  // text form, for clients that read no schemas, says the same.
  const parsed = JSON.parse(textOf(r));
  expect(r.structuredContent).toEqual(parsed);
  return parsed as T;
}

/** Calls a tool that must fail, and returns its error text ("code: message"). */
export async function toolError(client: McpClient, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  expect(r.isError).toBe(true);
  return textOf(r);
}

/**
 * Every tool once, checking each change through another tool (and `readBack` for what a REST
 * client would see). Shared by the hosted (HTTP) and local (stdio) tests.
 */
export async function exerciseAllTools(client: McpClient, readBack: (filename: string) => Promise<string>) {
  const tools = (await client.listTools()).tools;
  expect(tools.map((t) => t.name).sort()).toEqual(ALL_TOOLS);
  const annotations = Object.fromEntries(tools.map((t) => [t.name, t.annotations ?? {}]));
  expect(annotations.list_notes).toMatchObject({ readOnlyHint: true });
  expect(annotations.delete_note).toMatchObject({ destructiveHint: true });
  expect(annotations.update_note).toMatchObject({ idempotentHint: true });
  for (const t of tools) expect((t.description ?? "").length).toBeGreaterThan(20);
  for (const t of tools) expect(t.outputSchema?.type).toBe("object");

  const appended = await tool(client, "append_note", { filename: "agent.log", text: "found 3 failing tests" });
  expect(appended).toMatchObject({ filename: "agent.log", created: true });
  await tool(client, "append_note", { filename: "agent.log", text: "fixed them" });
  expect(await readBack("agent.log")).toBe("found 3 failing tests\nfixed them\n");
  for (const text of ["step 3", "step 4", "step 5"]) await tool(client, "append_note", { filename: "agent.log", text });
  // An agent reads the end of a long stream without pulling all of it into its context.
  const tail = await tool(client, "read_note", { id: appended.id, last_lines: 2 });
  expect(tail).toMatchObject({ plain_body: "step 4\nstep 5\n", lines_returned: 2, truncated: true });
  expect(tail.byte_size).toBe(Buffer.byteLength("found 3 failing tests\nfixed them\nstep 3\nstep 4\nstep 5\n"));
  expect(await tool(client, "read_note", { id: appended.id, last_lines: 50 })).toMatchObject({ lines_returned: 5, truncated: false });
  expect(await toolError(client, "read_note", { id: appended.id, last_lines: 0 })).toStartWith("validation_failed: last_lines");

  const folder = await tool(client, "create_folder", { name: "Agent notes" });
  expect(folder.id).toMatch(/^fold_/);
  const renamed = await tool(client, "rename_folder", { id: folder.id, name: "Agent" });
  expect(renamed.name).toBe("Agent");
  const folders = await tool(client, "list_folders");
  expect(folders.folders.map((f: { name: string }) => f.name)).toContain("Agent");

  const note = await tool(client, "create_note", { title: "Plan", plain_body: "1. read the logs", folder_id: folder.id });
  expect(note).toMatchObject({ title: "Plan", folder_id: folder.id, kind: "editable" });
  const updated = await tool(client, "update_note", { id: note.id, plain_body: "1. read the logs\n2. fix" });
  expect(updated.plain_body).toBe("1. read the logs\n2. fix");
  const read = await tool(client, "read_note", { id: note.id });
  expect(read).toMatchObject({ id: note.id, plain_body: "1. read the logs\n2. fix" });
  const moved = await tool(client, "move_note", { id: note.id, folder_id: null });
  expect(moved.folder_id).toBeNull();
  const listed = await tool(client, "list_notes", { limit: 10 });
  expect(listed.total).toBe(2);
  expect(listed.notes.map((n: { id: string }) => n.id)).toContain(note.id);

  expect(await tool(client, "delete_folder", { id: folder.id })).toEqual({ id: folder.id, deleted: true });
  expect(await tool(client, "delete_note", { id: note.id })).toEqual({ id: note.id, deleted: true });
  expect(await toolError(client, "read_note", { id: note.id })).toStartWith("not_found:");
  // Validation is the REST API's: a bad filename is refused the same way, in the tools' words.
  expect(await toolError(client, "append_note", { filename: "a/b", text: "x" })).toBe("validation_failed: filename must not contain / or \\");
  expect(await toolError(client, "append_note", { filename: "x".repeat(201), text: "x" })).toBe("validation_failed: filename must be at most 200 bytes of UTF-8");
}
