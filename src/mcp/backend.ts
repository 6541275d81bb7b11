import type { Scope } from "../deps";

/** A tool failure: the code of API.md first, so a model (and a person) can act on it. */
export class ToolFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** What a connection may do: it decides which tools a client sees. */
export interface Capabilities {
  scopes: ReadonlySet<Scope>;
  /** A token pinned to one note sees tools for that note only. */
  noteId: string | null;
}

type Json = Record<string, unknown>;

/** The eleven operations, the same over the hosted endpoint (services) and stdio (REST). */
export interface NotesBackend {
  capabilities(): Promise<Capabilities>;
  listNotes(a: { limit?: number; offset?: number; folder_id?: string }): Promise<{ notes: Json[]; total: number }>;
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
}
