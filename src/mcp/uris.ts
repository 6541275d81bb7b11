// The resources' addresses: a stream by its filename, an editable note by its id. Filenames hold
// no slash, so one path segment, percent-encoded, is the whole name.
export const STREAM_TEMPLATE = "notestream://streams/{filename}";
export const NOTE_TEMPLATE = "notestream://notes/{id}";
const STREAM_PREFIX = "notestream://streams/";
const NOTE_PREFIX = "notestream://notes/";

/** A note as the tools and the REST API return it: the fields an address is made from. */
export interface NoteFields {
  id: string;
  kind?: string;
  filename?: string | null;
  title?: string;
  byte_size?: number;
}

/** Which note a resource address names. */
export type NoteRef = { id: string } | { filename: string };

export function streamUri(filename: string): string {
  return STREAM_PREFIX + encodeURIComponent(filename);
}

/** A stream is addressed by its filename, which is how people and agents name it; an editable note by its id. */
export function uriOf(note: NoteFields): string {
  return note.kind !== "editable" && note.filename ? streamUri(note.filename) : NOTE_PREFIX + encodeURIComponent(note.id);
}

/** The note an address names, or null when it is not one of ours. */
export function refOf(uri: string): NoteRef | null {
  const [prefix, key] = uri.startsWith(STREAM_PREFIX) ? [STREAM_PREFIX, "filename"] : uri.startsWith(NOTE_PREFIX) ? [NOTE_PREFIX, "id"] : [null, null];
  if (!prefix) return null;
  let value: string;
  try {
    value = decodeURIComponent(uri.slice(prefix.length));
  } catch {
    return null;
  }
  if (value === "" || value.includes("/")) return null;
  return key === "filename" ? { filename: value } : { id: value };
}

/** A `resource_link` content item: clients show it as something to open or attach. */
export function resourceLink(note: NoteFields) {
  return { type: "resource_link" as const, uri: uriOf(note), name: note.filename ?? note.title ?? note.id, mimeType: "text/plain" };
}
