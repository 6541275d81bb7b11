// The MCP Inspector's CLI mode, one process per request as a person or a script would run it,
// against the hosted endpoint and `notestream mcp`, with each answer checked against the seeded
// notes: the tools, a tools/call of append_note (and the line read back), the resources and
// templates, a note read, the prompts and a prompt got with the stream's lines embedded.
import type { Seed, Service } from "./service";
import type { Outcome } from "./suite";
import type { Transport } from "./scenarios";

const TOOLS = ["list_notes", "read_note", "create_note", "append_note", "update_note", "delete_note", "move_note", "list_folders", "create_folder", "rename_folder", "delete_folder"];
/** One Inspector request, start to exit (it starts `notestream mcp` itself over stdio). */
const PROBE_TIMEOUT_MS = 60_000;
const PROMPTS = ["summarise_stream", "daily_digest", "incident_timeline"];

/** How to run one Inspector: its command, and how it hands `notestream mcp` its environment. */
export interface InspectorRunner {
  label: string;
  /** Names its streams (letters, digits and dashes). */
  slug: string;
  command: string[];
  cwd?: string;
  /** Extra arguments that give the stdio server its environment (the v2 CLI passes only what -e names). */
  stdioEnvArgs: (env: Record<string, string>) => string[];
}

interface Probe {
  what: string;
  args: string[];
  /** null when the answer is right, else what is wrong with it. */
  check: (answer: any) => string | null;
  /** The request is meant to fail: the process exits non-zero and says why. */
  fails?: RegExp;
  /** The answer is a tool result with isError, which the v2 CLI prints and then exits 5 for. */
  toolError?: boolean;
}

const sameSet = (got: string[], want: string[]) => JSON.stringify([...got].sort()) === JSON.stringify([...want].sort());
const embeddedText = (messages: any[], uri: string): string | undefined => messages.find((m) => m.content?.type === "resource" && m.content.resource?.uri === uri)?.content.resource.text;
const streamUri = (filename: string) => `notestream://streams/${encodeURIComponent(filename)}`;

/** Lines in order, each ending with LF (as a stream's text has them), optionally after a timestamp. */
function hasLinesInOrder(text: string | undefined, lines: string[], stamped: boolean): boolean {
  if (typeof text !== "string") return false;
  const got = text.split("\n").filter(Boolean).map((l) => (stamped ? l.replace(/^\d{4}-\d{2}-\d{2}T[\d:.]+Z /, "") : l));
  return lines.every((l, i) => got.indexOf(l) >= 0 && (i === 0 || got.indexOf(l) > got.indexOf(lines[i - 1]!))) && text.endsWith("\n");
}

function probes(seed: Seed, transport: Transport, slug: string): Probe[] {
  // A stream of its own for each Inspector and transport, so each reads back exactly its own line.
  const appended = `${slug}-${transport}.log`;
  const line = `appended by ${slug} over ${transport}`;
  const deploys = streamUri(seed.stream);
  const noteUri = `notestream://notes/${seed.editableId}`;
  return [
    {
      what: "tools/list: the eleven tools, each with an object inputSchema",
      args: ["--method", "tools/list"],
      check: (a) => {
        const names = (a.tools ?? []).map((t: any) => t.name);
        if (!sameSet(names, TOOLS)) return `tools ${JSON.stringify(names)}`;
        const bad = a.tools.filter((t: any) => t.inputSchema?.type !== "object" || !t.description).map((t: any) => t.name);
        return bad.length ? `without an object inputSchema or a description: ${bad.join(", ")}` : null;
      },
    },
    {
      what: `tools/call append_note: appends to ${appended} and links it`,
      args: ["--method", "tools/call", "--tool-name", "append_note", "--tool-arg", `filename=${appended}`, `text=${line}`],
      check: (a) => {
        if (a.isError) return `isError: ${JSON.stringify(a.content)}`;
        const s = a.structuredContent ?? {};
        if (s.filename !== appended || s.uri !== streamUri(appended) || s.created !== true) return `structuredContent ${JSON.stringify(s)}`;
        const link = (a.content ?? []).find((c: any) => c.type === "resource_link");
        return link?.uri === streamUri(appended) ? null : `no resource_link to ${streamUri(appended)}: ${JSON.stringify(a.content)}`;
      },
    },
    {
      what: "tools/call append_note without text: a tool error naming the field",
      args: ["--method", "tools/call", "--tool-name", "append_note", "--tool-arg", `filename=${appended}`],
      toolError: true,
      check: (a) => (a.isError === true && /^validation_failed: .*text/.test(a.content?.[0]?.text ?? "") ? null : `answer ${JSON.stringify(a)}`),
    },
    {
      what: "resources/list: the seeded streams and the editable note",
      args: ["--method", "resources/list"],
      check: (a) => {
        const uris = (a.resources ?? []).map((r: any) => r.uri);
        const want = [deploys, streamUri("errors.log"), noteUri, streamUri(appended)];
        const missing = want.filter((u) => !uris.includes(u));
        if (missing.length) return `missing ${missing.join(", ")} in ${JSON.stringify(uris)}`;
        const bad = a.resources.filter((r: any) => !r.name || r.mimeType !== "text/plain").map((r: any) => r.uri);
        return bad.length ? `without a name or text/plain: ${bad.join(", ")}` : null;
      },
    },
    {
      what: "resources/templates/list: the stream and note templates",
      args: ["--method", "resources/templates/list"],
      check: (a) => {
        const got = (a.resourceTemplates ?? []).map((t: any) => t.uriTemplate);
        return sameSet(got, ["notestream://streams/{filename}", "notestream://notes/{id}"]) ? null : `templates ${JSON.stringify(got)}`;
      },
    },
    {
      what: `resources/read ${deploys}: the stream's lines as text/plain`,
      args: ["--method", "resources/read", "--uri", deploys],
      check: (a) => {
        const c = a.contents?.[0];
        if (c?.uri !== deploys || c?.mimeType !== "text/plain") return `contents ${JSON.stringify(a.contents)}`;
        return c.text === seed.streamLines.map((l) => `${l}\n`).join("") ? null : `text ${JSON.stringify(c.text)}`;
      },
    },
    {
      what: `resources/read ${streamUri(appended)}: the line append_note wrote`,
      args: ["--method", "resources/read", "--uri", streamUri(appended)],
      check: (a) => (a.contents?.[0]?.text === `${line}\n` ? null : `contents ${JSON.stringify(a.contents)}`),
    },
    {
      what: "resources/read of the editable note: its plain text",
      args: ["--method", "resources/read", "--uri", noteUri],
      check: (a) => (a.contents?.[0]?.text === seed.editableBody ? null : `contents ${JSON.stringify(a.contents)}`),
    },
    {
      what: "resources/read of a stream that does not exist: an error saying not_found",
      args: ["--method", "resources/read", "--uri", streamUri("no-such.log")],
      fails: /not_found/,
      check: () => null,
    },
    {
      what: "prompts/list: the three prompts, with their arguments",
      args: ["--method", "prompts/list"],
      check: (a) => {
        const names = (a.prompts ?? []).map((p: any) => p.name);
        if (!sameSet(names, PROMPTS)) return `prompts ${JSON.stringify(names)}`;
        const summarise = a.prompts.find((p: any) => p.name === "summarise_stream");
        const filename = summarise.arguments?.find((x: any) => x.name === "filename");
        return filename?.required === true ? null : `summarise_stream's arguments ${JSON.stringify(summarise.arguments)}`;
      },
    },
    {
      what: `prompts/get summarise_stream filename=${seed.stream}: the stream's lines embedded`,
      args: ["--method", "prompts/get", "--prompt-name", "summarise_stream", "--prompt-args", `filename=${seed.stream}`],
      check: (a) => {
        const intro = a.messages?.[0]?.content?.text ?? "";
        if (!intro.includes(seed.stream)) return `first message ${JSON.stringify(a.messages?.[0])}`;
        return hasLinesInOrder(embeddedText(a.messages, deploys), seed.streamLines, true) ? null : `embedded ${JSON.stringify(a.messages?.slice(1))}`;
      },
    },
    {
      what: "prompts/get daily_digest: today's streams embedded",
      args: ["--method", "prompts/get", "--prompt-name", "daily_digest"],
      check: (a) => (hasLinesInOrder(embeddedText(a.messages ?? [], deploys), seed.streamLines, true) ? null : `messages ${JSON.stringify(a.messages)}`),
    },
    {
      what: `prompts/get incident_timeline around now: the lines in the window`,
      args: ["--method", "prompts/get", "--prompt-name", "incident_timeline", "--prompt-args", `filename=${seed.stream}`, `around=${new Date().toISOString()}`, "minutes=60"],
      check: (a) => (hasLinesInOrder(embeddedText(a.messages ?? [], deploys), seed.streamLines, true) ? null : `messages ${JSON.stringify(a.messages)}`),
    },
    {
      what: "prompts/get summarise_stream without filename: an error naming the argument",
      args: ["--method", "prompts/get", "--prompt-name", "summarise_stream"],
      fails: /filename is required/,
      check: () => null,
    },
  ];
}

/** Runs every probe through one Inspector over one transport. */
export async function runInspector(runner: InspectorRunner, service: Service, transport: Transport): Promise<Outcome[]> {
  const target =
    transport === "http"
      ? [`${service.base}/mcp`, "--transport", "http", "--header", `Authorization: Bearer ${service.token}`]
      : [...runner.stdioEnvArgs(service.stdioEnv), ...service.command, "mcp"];
  const outcomes: Outcome[] = [];
  // In order: the append comes before the reads that look for its line.
  for (const p of probes(service.seed, transport, runner.slug)) outcomes.push(await probe(runner, [...target, ...p.args], service.stdioEnv, p));
  return outcomes;
}

async function probe(runner: InspectorRunner, args: string[], env: Record<string, string>, p: Probe): Promise<Outcome> {
  const proc = Bun.spawn([...runner.command, ...args], { cwd: runner.cwd, env, stdout: "pipe", stderr: "pipe", timeout: PROBE_TIMEOUT_MS });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const said = `${stdout}${stderr}`.trim().slice(0, 600);
  if (p.fails) {
    const ok = code !== 0 && p.fails.test(said);
    return { name: p.what, verdict: ok ? "pass" : "fail", detail: ok ? "refused as it should be" : `exit ${code}: ${said}` };
  }
  if (code !== 0 && !p.toolError) return { name: p.what, verdict: "fail", detail: `exit ${code}: ${said}` };
  let answer: unknown;
  try {
    // The answer is the first JSON document printed (pretty, so it ends with a "}" line); the v2
    // CLI may print an error object after it.
    const end = stdout.indexOf("\n}");
    answer = JSON.parse(end >= 0 ? stdout.slice(0, end + 2) : stdout);
  } catch {
    return { name: p.what, verdict: "fail", detail: `not JSON: ${said}` };
  }
  const wrong = p.check(answer);
  return { name: p.what, verdict: wrong ? "fail" : "pass", detail: wrong ?? "" };
}
