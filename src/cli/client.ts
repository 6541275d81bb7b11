/**
 * Client commands (`append`, `tail`, `ls`, `cat`, and `run` in run.ts): talk to a running server
 * over HTTP with an API token, as `notestream mcp` does; no database is opened here.
 */
import { serverAccess } from "../config";
import { UsageError } from "./args";

/** A refusal or a failure to reach the server: printed as one line, exit 1. */
export class ClientError extends Error {}

const MAX_LINES = 500;
const MAX_BYTES = 256 * 1024;
const PAUSE_MS = 50;

export interface Client {
  url: string;
  token: string;
}

/** Splits `--url`/`--token` off argv; the environment fills in the rest. */
export function clientFrom(argv: string[]): { client: Client; rest: string[] } {
  const rest: string[] = [];
  let { url, token } = serverAccess();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--url" || a === "--token") {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${a} needs a value`);
      if (a === "--url") url = v;
      else token = v;
    } else rest.push(a);
  }
  if (!token) throw new UsageError("NOTESTREAM_TOKEN is not set (or pass --token)");
  return { client: { url: url.replace(/\/+$/, ""), token }, rest };
}

/** One request; a 429 waits its Retry-After and tries again, so a burst never loses a line. */
export async function call(c: Client, method: string, path: string, body?: unknown): Promise<any> {
  for (;;) {
    let res: Response;
    try {
      res = await fetch(`${c.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${c.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw new ClientError(`cannot reach ${c.url}: ${(e as Error).message}`);
    }
    const data = (await res.json().catch(() => null)) as any;
    if (res.status === 429) {
      const wait = Number(res.headers.get("retry-after") ?? "1");
      await Bun.sleep(Math.max(1, Number.isFinite(wait) ? wait : 1) * 1000);
      continue;
    }
    if (!res.ok) {
      const err = data?.error ?? {};
      throw new ClientError(`${err.code ?? `http_${res.status}`}: ${err.message ?? res.statusText}`);
    }
    return data;
  }
}

export const byFilename = (filename: string) => `/api/v1/notes/by-filename/${encodeURIComponent(filename)}`;

/** `ls [--kind stream|editable] [--folder ID]`: every note, one per line: id, kind, bytes, last change, name. */
export async function lsCommand(argv: string[], out: (l: string) => void): Promise<void> {
  const { client, rest } = clientFrom(argv);
  const query = new URLSearchParams({ limit: "200" });
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    const v = rest[i + 1];
    if ((a === "--kind" || a === "--folder") && v !== undefined) {
      query.set(a === "--kind" ? "kind" : "folder_id", v);
      i++;
    } else throw new UsageError(a === "--kind" || a === "--folder" ? `${a} needs a value` : `unexpected argument "${a}"`);
  }
  for (let offset = 0; ; offset += 200) {
    query.set("offset", String(offset));
    const notes = (await call(client, "GET", `/api/v1/notes?${query}`)) as { id: string; kind: string; byte_size: number; updated_at: string; filename: string | null; title: string }[];
    for (const n of notes) out([n.id, n.kind, String(n.byte_size), n.updated_at, n.filename ?? n.title].join("\t"));
    if (notes.length < 200) return;
  }
}

/** `cat FILENAME|ID`: a note's text as it is (a stream's lines, an editable note's body). */
export async function catCommand(argv: string[], write: (text: string) => Promise<unknown>): Promise<void> {
  const { client, rest } = clientFrom(argv);
  const note = (await oneNote(client, rest, "cat")) as { plain_body: string };
  await write(note.plain_body);
}

/** The one note a command names (an id or a filename), as the API answers it. */
export async function oneNote(c: Client, positionals: string[], command: string): Promise<unknown> {
  if (positionals.length !== 1) throw new UsageError(`${command} needs one FILENAME or note id`);
  return findNote(c, positionals[0]!);
}

/** The note record named by an id or a filename, as the API answers it. */
async function findNote(c: Client, name: string): Promise<unknown> {
  // An id is tried as an id first; a stream may well be called note_something.log, so a miss falls back to the filename.
  let note: unknown;
  if (/^note_\w+$/.test(name)) note = await call(c, "GET", `/api/v1/notes/${name}`).catch((e) => (e instanceof ClientError && e.message.startsWith("not_found") ? undefined : Promise.reject(e)));
  return note ?? call(c, "GET", byFilename(name));
}

/** `append FILENAME [TEXT…]`: the words as one line, or stdin's lines in groups. */
export async function appendCommand(argv: string[], out: (l: string) => void): Promise<void> {
  const { client, rest } = clientFrom(argv);
  const [filename, ...words] = rest;
  if (!filename) throw new UsageError("append needs a FILENAME");
  const send = (text: string) => call(client, "POST", `${byFilename(filename)}/append`, { text });
  if (words.length > 0) {
    await send(words.join(" "));
    return;
  }
  void out;
  await appendStdin(send);
}

/**
 * Lines that arrive together go as one append (the API keeps the lines), sent strictly one after
 * the other so order holds; a group closes at its size caps or when stdin pauses.
 */
async function appendStdin(send: (text: string) => Promise<unknown>): Promise<void> {
  const reader = Bun.stdin.stream().getReader();
  const decoder = new TextDecoder();
  let partial = "";
  let group: string[] = [];
  let bytes = 0;
  const flush = async () => {
    if (group.length === 0) return;
    const text = group.join("\n");
    group = [];
    bytes = 0;
    await send(text);
  };
  let pending: ReturnType<typeof reader.read> | null = null;
  for (;;) {
    pending ??= reader.read();
    // Waits for more input only briefly while a group is open: a pause sends what is there.
    const next = group.length === 0 ? await pending : await Promise.race([pending, Bun.sleep(PAUSE_MS).then(() => null)]);
    if (next === null) {
      await flush();
      continue;
    }
    pending = null;
    if (next.done) break;
    partial += decoder.decode(next.value, { stream: true });
    const parts = partial.split("\n");
    partial = parts.pop()!;
    for (const line of parts) {
      group.push(line.endsWith("\r") ? line.slice(0, -1) : line);
      bytes += Buffer.byteLength(line) + 1;
      if (group.length >= MAX_LINES || bytes >= MAX_BYTES) await flush();
    }
  }
  partial += decoder.decode();
  if (partial.length > 0) group.push(partial);
  await flush();
}

/** `tail [-n N] FILENAME`: the newest N lines (10 by default). */
export async function tailCommand(argv: string[], out: (l: string) => void): Promise<void> {
  const { client, rest } = clientFrom(argv);
  let n = 10;
  let follow = false;
  let filename: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === "-n") {
      n = Number(rest[++i]);
      if (!Number.isInteger(n) || n < 1) throw new UsageError("-n needs a positive whole number");
    } else if (rest[i] === "-f") follow = true;
    else if (filename === undefined) filename = rest[i];
    else throw new UsageError(`unexpected argument "${rest[i]}"`);
  }
  if (!filename) throw new UsageError("tail needs a FILENAME");
  if (follow) return followLines(client, `${byFilename(filename)}/lines`, n, out);
  const data = await call(client, "GET", `${byFilename(filename)}/lines?last=${n}`);
  for (const line of data.lines as { text: string }[]) out(line.text);
}

/**
 * Follows the stream (Server-Sent Events): `?last=N` replays the newest lines first, and after a
 * dropped connection `Last-Event-ID` resumes right after the last line printed, so none is lost
 * or repeated. Runs until a signal; Ctrl-C and SIGTERM end it with status 0.
 */
async function followLines(c: Client, path: string, n: number, out: (l: string) => void): Promise<void> {
  for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => process.exit(0));
  let lastId: string | undefined;
  let backoff = 250;
  for (;;) {
    let res: Response | undefined;
    try {
      res = await fetch(`${c.url}${path}${lastId === undefined ? `?last=${n}` : ""}`, {
        headers: { authorization: `Bearer ${c.token}`, accept: "text/event-stream", ...(lastId === undefined ? {} : { "last-event-id": lastId }) },
      });
    } catch {
      // The server is restarting or the network blinked: try again, a little later each time.
    }
    if (res && !res.ok && res.status !== 429 && res.status < 500) {
      const err = ((await res.json().catch(() => null)) as any)?.error ?? {};
      throw new ClientError(`${err.code ?? `http_${res.status}`}: ${err.message ?? res.statusText}`);
    }
    if (res?.ok && res.body) {
      backoff = 250;
      try {
        for await (const event of sseEvents(res.body)) {
          out((JSON.parse(event.data) as { text: string }).text);
          if (event.id !== undefined) lastId = event.id;
        }
      } catch {
        // A dropped connection: reconnect below with the last id seen.
      }
    }
    await Bun.sleep(backoff);
    backoff = Math.min(backoff * 2, 5_000);
  }
}

/** The events of an event-stream body (id and data; comments skipped). */
async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<{ id: string | undefined; data: string }> {
  const decoder = new TextDecoder();
  let buf = "";
  let id: string | undefined;
  let data: string[] = [];
  for await (const chunk of body) {
    buf += decoder.decode(chunk, { stream: true });
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i).replace(/\r$/, "");
      buf = buf.slice(i + 1);
      if (line === "") {
        if (data.length > 0) yield { id, data: data.join("\n") };
        id = undefined;
        data = [];
      } else if (line.startsWith("id:")) id = line.slice(3).trimStart();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
  }
}
