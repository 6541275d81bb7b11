// What the MCP resources, subscriptions, prompts and resource links must do, over either
// transport: shared by the hosted (HTTP) and local (stdio) tests, as exerciseAllTools is.
import { expect } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

/** The REST API of the server behind the client, as the test drives it. */
export interface Rest {
  append(filename: string, text: string): Promise<{ id: string }>;
  createNote(title: string, body: string): Promise<{ id: string }>;
  /** The stream's lines with their times, oldest first. */
  lines(filename: string): Promise<{ text: string; at: string }[]>;
}

const textOf = (r: { contents: unknown[] }) => (r.contents[0] as { text: string }).text;

/** Templates, the list paged (51 streams and a note: two pages), both kinds read, completions. */
export async function exerciseResources(client: Client, rest: Rest) {
  const { resourceTemplates } = await client.listResourceTemplates();
  expect(resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual(["notestream://notes/{id}", "notestream://streams/{filename}"]);
  for (let i = 0; i < 50; i++) await rest.append(`job-${String(i).padStart(2, "0")}.log`, `run ${i}`);
  await rest.append("deploys log.txt", "deploy 1 started");
  await rest.append("deploys log.txt", "deploy 1 done");
  const plan = await rest.createNote("Plan", "1. ship\n2. rest");

  const first = await client.listResources();
  expect(first.resources.length).toBe(50);
  expect(first.nextCursor).toBeString();
  const second = await client.listResources({ cursor: first.nextCursor });
  expect(second.nextCursor).toBeUndefined();
  const all = [...first.resources, ...second.resources];
  expect(all.length).toBe(52);
  const stream = all.find((r) => r.name === "deploys log.txt")!;
  expect(stream).toMatchObject({ uri: "notestream://streams/deploys%20log.txt", mimeType: "text/plain", size: Buffer.byteLength("deploy 1 started\ndeploy 1 done\n") });
  expect(all.find((r) => r.uri === `notestream://notes/${plan.id}`)).toMatchObject({ name: "Plan", title: "Plan", mimeType: "text/plain" });

  const read = await client.readResource({ uri: stream.uri });
  expect(read.contents[0]).toMatchObject({ uri: stream.uri, mimeType: "text/plain" });
  expect(textOf(read)).toBe("deploy 1 started\ndeploy 1 done\n");
  expect(textOf(await client.readResource({ uri: `notestream://notes/${plan.id}` }))).toBe("1. ship\n2. rest");
  await expect(client.readResource({ uri: "notestream://notes/note_missing" })).rejects.toThrow("not_found");
  await expect(client.readResource({ uri: "https://example.com/x" })).rejects.toThrow("not_found");

  const files = await client.complete({ ref: { type: "ref/resource", uri: "notestream://streams/{filename}" }, argument: { name: "filename", value: "dep" } });
  expect(files.completion.values).toEqual(["deploys log.txt"]);
  const ids = await client.complete({ ref: { type: "ref/resource", uri: "notestream://notes/{id}" }, argument: { name: "id", value: plan.id.slice(0, -2) } });
  expect(ids.completion.values).toEqual([plan.id]);
  const fromPrompt = await client.complete({ ref: { type: "ref/prompt", name: "summarise_stream" }, argument: { name: "filename", value: "job-4" } });
  expect(fromPrompt.completion.values.length).toBe(10);
}

/** Subscribed: an append through the REST API is notified within 2 s; unsubscribed: no more. */
export async function exerciseSubscriptions(client: Client, rest: Rest) {
  await rest.append("watched.log", "before");
  await rest.append("other.log", "x");
  const updates: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
  const uri = "notestream://streams/watched.log";
  await client.subscribeResource({ uri });
  await rest.append("other.log", "not watched");
  const t0 = Date.now();
  await rest.append("watched.log", "deploy failed");
  while (!updates.includes(uri) && Date.now() - t0 < 2_000) await Bun.sleep(20);
  expect(updates).toEqual([uri]);
  await client.unsubscribeResource({ uri });
  await rest.append("watched.log", "after");
  await Bun.sleep(2_200);
  expect(updates).toEqual([uri]);
  await expect(client.subscribeResource({ uri: "notestream://streams/missing.log" })).rejects.toThrow("not_found");
}

type Message = { role: string; content: { type: string; text?: string; resource?: { uri: string; mimeType?: string; text?: string } } };
const resourcesOf = (messages: Message[]) => messages.filter((m) => m.content.type === "resource").map((m) => m.content.resource!);

/** The three prompts, each embedding the lines it is about; a span that holds none says so. */
export async function exercisePrompts(client: Client, rest: Rest) {
  const names = (await client.listPrompts()).prompts.map((p) => p.name).sort();
  expect(names).toEqual(["daily_digest", "incident_timeline", "summarise_stream"]);
  for (const line of ["12:00 db slow", "12:01 db down", "12:04 db back"]) await rest.append("incident.log", line);
  await rest.append("other.log", "unrelated");

  const summary = await client.getPrompt({ name: "summarise_stream", arguments: { filename: "incident.log", since: "1h" } });
  expect(summary.messages[0]!.content).toMatchObject({ type: "text" });
  const [embedded] = resourcesOf(summary.messages as Message[]);
  expect(embedded!.uri).toBe("notestream://streams/incident.log");
  expect(embedded!.text!.split("\n").filter(Boolean).map((l) => l.split(" ").slice(1).join(" "))).toEqual(["12:00 db slow", "12:01 db down", "12:04 db back"]);

  const digest = await client.getPrompt({ name: "daily_digest", arguments: {} });
  expect(resourcesOf(digest.messages as Message[]).map((r) => r.uri).sort()).toEqual(["notestream://streams/incident.log", "notestream://streams/other.log"]);

  const lines = await rest.lines("incident.log");
  const timeline = await client.getPrompt({ name: "incident_timeline", arguments: { filename: "incident.log", around: lines[1]!.at, minutes: "5" } });
  expect(resourcesOf(timeline.messages as Message[])[0]!.text).toContain("12:01 db down");
  const before = new Date(Date.parse(lines[0]!.at) - 3 * 3_600_000).toISOString();
  const empty = await client.getPrompt({ name: "incident_timeline", arguments: { filename: "incident.log", around: before, minutes: "5" } });
  expect(resourcesOf(empty.messages as Message[])[0]!.text).toBe("");
  await expect(client.getPrompt({ name: "incident_timeline", arguments: { filename: "incident.log", around: "soon" } })).rejects.toThrow("validation_failed: around must be a time");
  await expect(client.getPrompt({ name: "summarise_stream", arguments: { filename: "missing.log" } })).rejects.toThrow("not_found");
}

type ToolResult = { content: { type: string; uri?: string; name?: string; mimeType?: string; text?: string }[]; structuredContent?: Record<string, unknown> };

/** append_note and create_note name their note: a resource_link, and its address in the structure and the text. */
export async function exerciseResourceLinks(client: Client) {
  const appended = (await client.callTool({ name: "append_note", arguments: { filename: "linked.log", text: "hi" } })) as ToolResult;
  const streamLink = { type: "resource_link", uri: "notestream://streams/linked.log", name: "linked.log", mimeType: "text/plain" };
  expect(appended.content).toContainEqual(streamLink);
  expect(appended.structuredContent?.uri).toBe(streamLink.uri);
  expect(JSON.parse(appended.content[0]!.text!).uri).toBe(streamLink.uri);
  const created = (await client.callTool({ name: "create_note", arguments: { title: "Runbook", plain_body: "restart it" } })) as ToolResult;
  const id = created.structuredContent?.id as string;
  expect(created.content).toContainEqual({ type: "resource_link", uri: `notestream://notes/${id}`, name: "Runbook", mimeType: "text/plain" });
  expect(JSON.parse(created.content[0]!.text!).uri).toBe(`notestream://notes/${id}`);
}

/** A token pinned to one stream lists, reads, completes and subscribes to that stream only. */
export async function exercisePinned(pinned: Client, own: string, other: string) {
  const { resources } = await pinned.listResources();
  expect(resources.map((r) => r.uri)).toEqual([`notestream://streams/${own}`]);
  expect((await pinned.readResource({ uri: `notestream://streams/${own}` })).contents.length).toBe(1);
  await expect(pinned.readResource({ uri: `notestream://streams/${other}` })).rejects.toThrow("not_found");
  const c = await pinned.complete({ ref: { type: "ref/resource", uri: "notestream://streams/{filename}" }, argument: { name: "filename", value: "" } });
  expect(c.completion.values).toEqual([own]);
  await expect(pinned.subscribeResource({ uri: `notestream://streams/${other}` })).rejects.toThrow("not_found");
  const digest = await pinned.getPrompt({ name: "daily_digest", arguments: {} });
  expect(resourcesOf(digest.messages as Message[]).map((r) => r.uri)).toEqual([`notestream://streams/${own}`]);
}
