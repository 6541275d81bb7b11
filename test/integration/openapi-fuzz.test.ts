/**
 * Requests generated from the service's own OpenAPI document, for every /api/v1 operation: path
 * parameters, queries and bodies drawn from the documented schemas (valid) and around them
 * (wrong types, huge numbers, odd strings), with a fixed seed. Every answer must be documented:
 * never a 5xx; an error is the envelope with a code of the closed list and that code's status;
 * every answer carries the request id and the rate-limit headers; a 429 says when to retry, a 405
 * which methods are allowed. (Response bodies are checked against the document once it
 * describes them: the clients issue.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { codeToStatus } from "../../src/http/errors";
import { harness, type Harness } from "../helpers/harness";

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  minimum?: number;
  maximum?: number;
  const?: unknown;
};
interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required?: boolean;
  schema: Schema;
}
interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
  body?: Schema;
}

let h: Harness;
let token = "";
const ids = { notes: [] as string[], folders: [] as string[], filenames: [] as string[], snapshots: [] as string[] };
let operations: Operation[] = [];

beforeAll(async () => {
  // Team: the largest standard budget; the fake clock moves a minute on every so often so the
  // rate limits come and go like a real client's would.
  h = await harness();
  const owner = await h.account("team");
  token = await h.token(owner, ["read", "write"]);
  const create = async (body: unknown) => (await h.request("POST", "/api/v1/notes", { token, body })).json();
  for (let i = 0; i < 3; i++) ids.notes.push((await create({ note: { title: `note ${i}`, plain_body: "body" } })).id);
  await h.request("PATCH", `/api/v1/notes/${ids.notes[0]}`, { token, body: { note: { plain_body: "changed" } } });
  const snaps = await (await h.request("GET", `/api/v1/notes/${ids.notes[0]}/snapshots`, { token })).json();
  ids.snapshots.push(...(snaps as { id: string }[]).map((s) => s.id));
  for (const name of ["deploys.log", "errors.log"]) {
    const r = await (await h.request("POST", `/api/v1/notes/by-filename/${name}/append`, { token, body: { text: "first" } })).json();
    ids.notes.push(r.id);
    ids.filenames.push(name);
  }
  await h.request("POST", `/api/v1/notes/${ids.notes.at(-1)}/inbox`, { token });
  ids.folders.push((await (await h.request("POST", "/api/v1/folders", { token, body: { folder: { name: "Ops" } } })).json()).id);

  const doc = resolveRefs(await (await h.request("GET", "/api/v1/openapi.json")).json()) as {
    paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content?: Record<string, { schema: Schema }> } }>>;
  };
  for (const [path, ops] of Object.entries(doc.paths)) {
    if (!path.startsWith("/api/v1/") || path === "/api/v1/openapi.json") continue;
    for (const [method, op] of Object.entries(ops)) {
      operations.push({ method: method.toUpperCase(), path, parameters: op.parameters ?? [], body: op.requestBody?.content?.["application/json"]?.schema });
    }
  }
}, 30_000);

afterAll(() => h.close());

/** The document with every local $ref replaced by what it points at (named models, shared parameters). */
function resolveRefs(doc: unknown): unknown {
  const at = (ref: string) => ref.slice(2).split("/").reduce((o: any, k) => o?.[k], doc);
  const walk = (v: unknown, depth: number): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x, depth));
    if (!v || typeof v !== "object") return v;
    const ref = (v as { $ref?: string }).$ref;
    if (ref && depth < 20) return walk(at(ref), depth + 1);
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, depth)]));
  };
  return walk(doc, 0);
}

const oddStrings = fc.constantFrom("", " ", "x".repeat(300), "ü🚀", "..", "%", "a/b", "\u0000", "note_", "1e99", "-1", "null", "[]");

/** A value the schema documents, mostly, with edge cases of each type. */
function valid(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((s) => valid(s, depth)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "string":
      return fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...ids.notes, ...ids.folders, ...ids.filenames, ...ids.snapshots, "note_missing", "a line", "https://hooks.example.com/x", "ops@example.com") },
        { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
        { weight: 1, arbitrary: oddStrings },
      );
    case "integer":
    case "number":
      return fc.oneof(fc.integer({ min: schema.minimum ?? -10, max: Math.min(schema.maximum ?? 100_000, 1e9) }), fc.constantFrom(0, 60, 86_400));
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return depth > 3 ? fc.constant([]) : fc.array(valid(schema.items ?? {}, depth + 1), { maxLength: 3 });
    case "object": {
      if (depth > 3) return fc.constant({});
      const props = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      return fc.record(
        Object.fromEntries(Object.entries(props).map(([k, s]) => [k, valid(s, depth + 1)])),
        { requiredKeys: Object.keys(props).filter((k) => required.has(k)) },
      );
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Around the schema: documented shapes with one wrong part, or anything at all. */
function body(schema: Schema | undefined): fc.Arbitrary<string | undefined> {
  if (!schema) return fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.json({ maxDepth: 3 }) });
  return fc.oneof(
    { weight: 4, arbitrary: valid(schema).map((v) => JSON.stringify(v)) },
    { weight: 2, arbitrary: fc.json({ maxDepth: 4 }) },
    { weight: 1, arbitrary: fc.constantFrom("", "{", "[]", "null", '{"note":null}', '{"notes":[]}', '{"text":""}', '{"note":{"folder_id":""}}', '{"note":{"title":["a"]}}') },
  );
}

function queryValue(schema: Schema): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: valid(schema).map((v) => String(v)) },
    { weight: 2, arbitrary: fc.constantFrom("9223372036854775807", "1e21", "1e99", "-1", "1.5", "abc", "", "0", "1000001", "201") },
  );
}

function pathValue(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...ids.notes, ...ids.folders, ...ids.filenames, ...ids.snapshots).map(encodeURIComponent) },
    { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 30 }).map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.constantFrom("%", "%E0%A4%A", "%2F", "note_" + "x".repeat(300), "%00", "..") },
  );
}


test("every generated request to every /api/v1 operation is answered as documented, never with a 5xx", async () => {
  expect(operations.length).toBeGreaterThan(25);
  const operation = fc.integer({ min: 0, max: operations.length - 1 }).chain((i) => {
    const op = operations[i]!;
    const params = op.parameters.filter((p) => p.in !== "header");
    return fc.record({
      op: fc.constant(op),
      path: fc.tuple(...params.filter((p) => p.in === "path").map(() => pathValue()), fc.constant(null)),
      query: fc.tuple(...params.filter((p) => p.in === "query").map((p) => queryValue(p.schema)), fc.constant(null)),
      body: body(op.body),
      key: fc.option(fc.constantFrom("k1", "k2", "k3"), { freq: 5 }),
    });
  });
  const knownCodes = new Map<string, number>(Object.entries(codeToStatus));
  let sent = 0;
  const seen = new Map<string, Set<number>>();
  await fc.assert(
    fc.asyncProperty(operation, async ({ op, path, query, body, key }) => {
      if (++sent % 150 === 0) h.clock.advance(61_000);
      const pathParams = op.parameters.filter((p) => p.in === "path");
      let url = op.path;
      pathParams.forEach((p, i) => (url = url.replace(`{${p.name}}`, path[i] as string)));
      const q = new URLSearchParams();
      op.parameters.filter((p) => p.in === "query").forEach((p, i) => query[i] !== undefined && q.set(p.name, query[i] as string));
      if ([...q].length) url += `?${q}`;
      const headers: Record<string, string> = {};
      if (key && op.method !== "GET") headers["idempotency-key"] = key;
      const res = await h.request(op.method, url, { token, body, headers });
      const label = `${op.method} ${url} ${body ?? ""}`.slice(0, 300);
      const text = await res.text();
      if (res.status >= 500) throw new Error(`${res.status} for ${label}: ${text.slice(0, 300)}`);
      expect(res.headers.get("x-request-id")).toBeTruthy();
      for (const name of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "x-ratelimit-bucket"]) {
        if (!res.headers.get(name)) throw new Error(`no ${name} on ${res.status} for ${label}`);
      }
      if (res.status >= 400) {
        expect(res.headers.get("content-type") ?? "").toStartWith("application/json");
        const code = (JSON.parse(text) as { error: { code: string; message: string } }).error.code;
        if (knownCodes.get(code) !== res.status) throw new Error(`code ${code} with status ${res.status} for ${label}`);
        if (res.status === 429 && !res.headers.get("retry-after")) throw new Error(`429 without Retry-After for ${label}`);
        if (res.status === 405 && !res.headers.get("allow")) throw new Error(`405 without Allow for ${label}`);
      } else if (!op.path.endsWith("/download")) {
        expect(res.headers.get("content-type") ?? "").toStartWith("application/json");
        JSON.parse(text);
      }
      const statuses = seen.get(`${op.method} ${op.path}`) ?? new Set<number>();
      statuses.add(res.status);
      seen.set(`${op.method} ${op.path}`, statuses);
    }),
    { seed: 20261124, numRuns: 20_000, endOnFailure: true },
  );
  // The sweep reached every operation, and most of them with a success as well as a refusal.
  expect(seen.size).toBe(operations.length);
  const succeeded = [...seen.values()].filter((s) => [...s].some((c) => c < 300)).length;
  expect(succeeded).toBeGreaterThan(operations.length / 2);
}, 120_000);
