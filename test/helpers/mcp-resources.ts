// What the MCP resources, subscriptions, prompts and resource links must do, over either
// transport: shared by the hosted (HTTP) and local (stdio) tests, as exerciseAllTools is.
import { expect } from "bun:test";
import type { Client as ClientV2 } from "@modelcontextprotocol/client";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { McpClient } from "./mcp";

/** The REST API of the server behind the client, as the test drives it. */
export interface Rest {
  append(filename: string, text: string): Promise<{ id: string }>;
  createNote(title: string, body: string): Promise<{ id: string }>;
  /** The stream's lines with their times, oldest first. */
  lines(filename: string): Promise<{ text: string; at: string }[]>;
}

const textOf = (r: { contents: unknown[] }) => (r.contents[0] as { text: string }).text;

type ResourceUpdated = { params: { uri: string } };

/** Either SDK's client on 2025-11-25, which subscribes per resource within its connection. */
export interface Subscriber extends McpClient {
  subscribeResource(params: { uri: string }): Promise<unknown>;
  unsubscribeResource(params: { uri: string }): Promise<unknown>;
  /** The v1 SDK's takes the notification's schema, the v2 SDK's its method name. */
  setNotificationHandler(method: unknown, handler: (n: ResourceUpdated) => void): void;
}

/** The v2 SDK's client, which on 2026-07-28 listens instead of subscribing. */
export type Listener = McpClient & Pick<ClientV2, "listen" | "getProtocolEra" | "setNotificationHandler">;

const isListener = (client: Subscriber | Listener): client is Listener => "getProtocolEra" in client && client.getProtocolEra() === "modern";

/** Calls `updated` with the address of each `notifications/resources/updated` the client gets. */
function onResourceUpdated(client: Subscriber | Listener, updated: (uri: string) => void): void {
  const handler = (n: ResourceUpdated) => void updated(n.params.uri);
  if ("getProtocolEra" in client) (client as Listener).setNotificationHandler("notifications/resources/updated", handler);
  else client.setNotificationHandler(ResourceUpdatedNotificationSchema, handler);
}

/** Waits up to 2 s (the promise of notifications/resources/updated) for `done`. */
async function within2s(done: () => boolean): Promise<void> {
  const t0 = Date.now();
  while (!done() && Date.now() - t0 < 2_000) await Bun.sleep(20);
}

/** Templates, the list paged (51 streams and a note: two pages), both kinds read, completions. */
export async function exerciseResources(client: McpClient, rest: Rest) {
  const { resourceTemplates } = await client.listResourceTemplates();
  expect(resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual(["notestream://notes/{id}", "notestream://streams/{filename}"]);
  for (let i = 0; i < 50; i++) await rest.append(`job-${String(i).padStart(2, "0")}.log`, `run ${i}`);
  await rest.append("deploys log.txt", "deploy 1 started");
  await rest.append("deploys log.txt", "deploy 1 done");
  const plan = await rest.createNote("Plan", "1. ship\n2. rest");

  // Without a cursor the v1 SDK's client asks for the first page; the v2 SDK's walks the pages itself.
  const first = await client.listResources();
  let all = first.resources;
  if (!("getProtocolEra" in client)) {
    expect(first.resources.length).toBe(50);
    expect(first.nextCursor).toBeString();
    const second = await client.listResources({ cursor: first.nextCursor });
    expect(second.nextCursor).toBeUndefined();
    all = [...first.resources, ...second.resources];
  }
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
export async function exerciseSubscriptions(client: Subscriber, rest: Rest) {
  await rest.append("watched.log", "before");
  await rest.append("other.log", "x");
  const updates: string[] = [];
  onResourceUpdated(client, (uri) => updates.push(uri));
  const uri = "notestream://streams/watched.log";
  await client.subscribeResource({ uri });
  await rest.append("other.log", "not watched");
  await rest.append("watched.log", "deploy failed");
  await within2s(() => updates.includes(uri));
  expect(updates).toEqual([uri]);
  await client.unsubscribeResource({ uri });
  await rest.append("watched.log", "after");
  await Bun.sleep(2_200);
  expect(updates).toEqual([uri]);
  await expect(client.subscribeResource({ uri: "notestream://streams/missing.log" })).rejects.toThrow("not_found");
}

/**
 * 2026-07-28's listen: the honoured filter keeps only what the caller may follow (`foreign` is the
 * address of another account's stream); an append through the REST API is notified within 2 s on
 * the listen that names its stream, and on no other; a closed listen gets no more.
 */
export async function exerciseListen(client: Listener, rest: Rest, foreign: string) {
  const [watched, second] = ["notestream://streams/watched.log", "notestream://streams/second.log"];
  await rest.append("watched.log", "before");
  await rest.append("second.log", "before");
  await rest.append("unlisted.log", "before");
  const updates: string[] = [];
  onResourceUpdated(client, (uri) => updates.push(uri));
  const first = await client.listen({ resourceSubscriptions: [foreign, "notestream://streams/missing.log", watched, "https://example.com/x"] });
  expect(first.honoredFilter.resourceSubscriptions).toEqual([watched]);
  const other = await client.listen({ resourceSubscriptions: [second] });
  expect(other.honoredFilter.resourceSubscriptions).toEqual([second]);

  await rest.append("unlisted.log", "not listened to");
  await rest.append("watched.log", "deploy failed");
  await within2s(() => updates.includes(watched));
  expect(updates).toEqual([watched]);
  await rest.append("second.log", "deploy retried");
  await within2s(() => updates.includes(second));
  expect(updates).toEqual([watched, second]);

  await first.close();
  expect(await first.closed).toBe("local");
  // The close is a notification, which nothing answers; a request sent after it is answered after
  // the server has taken it (stdio reads in order), so the appends below come after it too.
  await client.callTool({ name: "list_folders", arguments: {} });
  updates.length = 0;
  await rest.append("watched.log", "after the close");
  await rest.append("second.log", "still listened to");
  await within2s(() => updates.includes(second));
  await Bun.sleep(2_200);
  expect(updates).toEqual([second]);
  await other.close();
}

type Message = { role: string; content: { type: string; text?: string; resource?: { uri: string; mimeType?: string; text?: string } } };
const resourcesOf = (messages: Message[]) => messages.filter((m) => m.content.type === "resource").map((m) => m.content.resource!);

/** The three prompts, each embedding the lines it is about; a span that holds none says so. */
export async function exercisePrompts(client: McpClient, rest: Rest) {
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
export async function exerciseResourceLinks(client: McpClient) {
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

/**
 * A token pinned to one stream lists, reads, completes and subscribes to (or listens to) that
 * stream only; `connectPinned` connects with a token pinned to the note it is given.
 */
export async function exercisePinned(rest: Rest, connectPinned: (noteId: string) => Promise<Subscriber | Listener>) {
  const [own, other] = ["mine.log", "theirs.log"];
  const mine = await rest.append(own, "x");
  await rest.append(other, "y");
  const pinned = await connectPinned(mine.id);
  const { resources } = await pinned.listResources();
  expect(resources.map((r) => r.uri)).toEqual([`notestream://streams/${own}`]);
  expect((await pinned.readResource({ uri: `notestream://streams/${own}` })).contents.length).toBe(1);
  await expect(pinned.readResource({ uri: `notestream://streams/${other}` })).rejects.toThrow("not_found");
  const c = await pinned.complete({ ref: { type: "ref/resource", uri: "notestream://streams/{filename}" }, argument: { name: "filename", value: "" } });
  expect(c.completion.values).toEqual([own]);
  if (isListener(pinned)) {
    const listen = await pinned.listen({ resourceSubscriptions: [`notestream://streams/${other}`, `notestream://streams/${own}`] });
    expect(listen.honoredFilter.resourceSubscriptions).toEqual([`notestream://streams/${own}`]);
    await listen.close();
  } else await expect(pinned.subscribeResource({ uri: `notestream://streams/${other}` })).rejects.toThrow("not_found");
  const digest = await pinned.getPrompt({ name: "daily_digest", arguments: {} });
  expect(resourcesOf(digest.messages as Message[]).map((r) => r.uri)).toEqual([`notestream://streams/${own}`]);
}
