import { ProtocolError } from "@modelcontextprotocol/server";
import type { Scope } from "../principal";
import type { NoteRef } from "./uris";

/** A tool failure: the code of API.md first, so a model (and a person) can act on it. */
export class ToolFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A JSON-RPC error of resources and prompts: the SDK's own class, so both protocol revisions
 * encode it; its message starts with our code, as a tool error's text does.
 */
export { ProtocolError };

/**
 * JSON-RPC codes. A resource that is not there is -32602 with the uri as its data: what revision
 * 2026-07-28 requires and the SDK answers on every revision (-32002 of older servers is gone).
 */
export const RPC = { invalidRequest: -32600, invalidParams: -32602, internal: -32603 } as const;

/** "Resource not found" in the form both revisions use: invalid params, the uri as data. */
export const resourceNotFound = (uri: string, message: string) => new ProtocolError(RPC.invalidParams, message, { uri });

/**
 * One validation problem as tool-error text: "<argument> <problem>" ("id is required"). The
 * services' own messages are mostly whole sentences that name the field already ("title must be
 * at most 200 characters") and are kept as they are; their fields drop the REST body's wrapper
 * ("note.title" is the tool's "title").
 */
export function problemText(field: string, message: string): string {
  const argument = field.replace(/^(note|folder)\./, "");
  return /^(is|are|must|expected)\b/.test(message) ? `${argument} ${message}` : message;
}

/** A validation_failed tool error from REST-style details ({field, message}[]), or null when there are none. */
export function validationFailure(details: unknown): ToolFailure | null {
  if (!Array.isArray(details) || details.length === 0) return null;
  const problems = details.filter((d): d is { field: string; message: string } => typeof d?.field === "string" && typeof d?.message === "string");
  if (problems.length === 0) return null;
  return new ToolFailure("validation_failed", problems.map((d) => problemText(d.field, d.message)).join("; "));
}

/** What a connection may do: it decides which tools a client sees. */
export interface Capabilities {
  scopes: ReadonlySet<Scope>;
  /** A token pinned to one note sees tools for that note only. */
  noteId: string | null;
}

type Json = Record<string, unknown>;

/** A stream's line as the lines API gives it. */
export interface Line {
  text: string;
  at: string;
}

/** The eleven operations, the same over the hosted endpoint (services) and stdio (REST). */
export interface NotesBackend {
  capabilities(): Promise<Capabilities>;
  /** The time lines are stamped with (the service's clock), for "the last 24 hours". */
  now(): number;
  /** With `query`: the full-text search, best match first, each note with its snippet. */
  listNotes(a: { limit?: number; offset?: number; folder_id?: string; query?: string }): Promise<{ notes: Json[]; total: number }>;
  readNote(a: { id: string }): Promise<Json>;
  createNote(a: { title: string; plain_body: string; folder_id?: string }): Promise<Json>;
  appendNote(a: { filename: string; text: string }): Promise<Json>;
  updateNote(a: { id: string; title?: string; plain_body?: string }): Promise<Json>;
  deleteNote(a: { id: string }): Promise<Json>;
  moveNote(a: { id: string; folder_id: string | null }): Promise<Json>;
  listFolders(): Promise<{ folders: Json[] }>;
  createFolder(a: { name: string }): Promise<Json>;
  renameFolder(a: { id: string; name: string }): Promise<Json>;
  deleteFolder(a: { id: string }): Promise<Json>;
  /** A stream's newest lines (at most 1,000), oldest first: what resources and prompts show of it. */
  streamLines(by: NoteRef, last: number): Promise<Line[]>;
  /** Calls `changed` after each append to the stream, within 2 s, until the returned function is called. */
  follow(by: NoteRef, changed: () => void): Promise<() => void>;
}
