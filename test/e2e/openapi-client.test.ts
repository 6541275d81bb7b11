/**
 * The published OpenAPI document as client authors use it: fetched from the compiled binary,
 * validated by a maintained validator (@readme/openapi-parser), turned into types by
 * openapi-typescript, and a client written against those types with openapi-fetch compiled under
 * strict TypeScript and run against the same binary: a create, an append, a list and a 404.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { compileErrors, validate } from "@readme/openapi-parser";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildBinary, cleanup, provision, ROOT, startServer, tempDir, type RunningServer } from "../helpers/binary";

let server: RunningServer;
let token = "";
let doc: any;

beforeAll(async () => {
  buildBinary();
  const dataDir = tempDir("data");
  token = provision(dataDir).token;
  server = await startServer(dataDir);
  doc = await (await fetch(`${server.base}/api/v1/openapi.json`)).json();
}, 120_000);

afterAll(() => cleanup());

test("the document is valid OpenAPI 3.1 for a maintained validator", async () => {
  const result = await validate(structuredClone(doc));
  expect(result.valid ? "" : compileErrors(result)).toBe("");
  expect(doc.openapi).toBe("3.1.0");
});

test("named schemas, 3.1 types, the error envelope, the headers; only the API and the paths its users meet", () => {
  const text = JSON.stringify(doc);
  expect(text).not.toContain('"nullable"');
  expect(text).not.toContain('"$id"');
  expect(text).not.toContain('"format":"integer"');
  expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(["Note", "Folder", "AppendResult", "AppendRequest", "Error", "Account", "Token", "Lines", "Snapshot"]));
  const paths = Object.keys(doc.paths);
  expect(paths.filter((p) => !p.startsWith("/api/v1/")).sort()).toEqual(["/badge/{token}.json", "/badge/{token}.svg", "/h/{token}", "/mcp", "/up", "/up/deep", "/webhooks/lemonsqueezy"]);
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!path.startsWith("/api/v1/")) continue;
      // Every API operation answers its errors in the envelope and says how much budget is left.
      for (const status of ["401", "429"]) expect(op.responses[status]?.$ref).toBe(`#/components/responses/E${status}`);
      const ok = Object.entries<any>(op.responses).find(([s]) => s.startsWith("2"))![1];
      expect(Object.keys(ok.headers)).toContain("X-RateLimit-Remaining");
      if (["post", "patch", "delete"].includes(method)) expect(op.parameters).toContainEqual({ $ref: "#/components/parameters/IdempotencyKey" });
      for (const type of Object.keys(op.requestBody?.content ?? {})) expect(["application/json", "text/plain"]).toContain(type);
    }
  }
  expect(doc.components.responses.E429.headers["Retry-After"]).toBeDefined();
  const ids = Object.values<any>(doc.paths).flatMap((item) => Object.values<any>(item).map((op) => op.operationId));
  expect(new Set(ids).size).toBe(ids.length);
  for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z0-9]*$/);
  expect(doc.paths["/up"].get.security).toEqual([]);
  expect(Object.keys(doc.paths["/api/v1/notes/by-filename/{filename}/append"].post.requestBody.content).sort()).toEqual(["application/json", "text/plain"]);
  expect(doc.components.schemas.Note.properties.byte_size).toMatchObject({ type: "integer" });
  expect(doc.components.schemas.Note.properties.folder_id.type).toEqual(["string", "null"]);
});

test("a client generated with openapi-typescript and openapi-fetch compiles under strict TypeScript and works", async () => {
  const dir = tempDir("client");
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  writeFileSync(join(dir, "openapi.json"), JSON.stringify(doc));
  const gen = Bun.spawnSync([join(ROOT, "node_modules", ".bin", "openapi-typescript"), "openapi.json", "-o", "api.d.ts"], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  expect(gen.exitCode).toBe(0);
  writeFileSync(join(dir, "config.ts"), `export const BASE = ${JSON.stringify(server.base)};\nexport const TOKEN = ${JSON.stringify(token)};\n`);
  writeFileSync(
    join(dir, "client.ts"),
    `import createClient from "openapi-fetch";
import type { components, paths } from "./api";
import { BASE, TOKEN } from "./config";

type Note = components["schemas"]["Note"];
const api = createClient<paths>({ baseUrl: BASE, headers: { authorization: "Bearer " + TOKEN } });

const created = await api.POST("/api/v1/notes", { body: { note: { title: "From a generated client", plain_body: "hello" } } });
if (!created.data) throw new Error("create failed");
const note: Note = created.data;

const appended = await api.POST("/api/v1/notes/by-filename/{filename}/append", {
  params: { path: { filename: "generated.log" } },
  body: { text: "line one" },
  headers: { "Idempotency-Key": "gen-1" },
});
if (!appended.data) throw new Error("append failed");
const size: number = appended.data.byte_size;
const remaining: number | null = appended.data.bytes_remaining;

const listed = await api.GET("/api/v1/notes", { params: { query: { limit: 10, kind: "editable" } } });
const titles: string[] = (listed.data ?? []).map((n: Note) => n.title);
const total = listed.response.headers.get("x-total-count");

const missing = await api.GET("/api/v1/notes/{id}", { params: { path: { id: "note_missing" } } });
const code: string | undefined = missing.error?.error.code;

console.log(JSON.stringify({ id: note.id, kind: note.kind, size, remaining, titles, total, missing: missing.response.status, code }));
`,
  );
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: "es2022", module: "esnext", moduleResolution: "bundler", lib: ["es2022", "dom"], skipLibCheck: false, noUncheckedIndexedAccess: true, types: [] },
      files: ["client.ts"],
    }),
  );
  const tsc = Bun.spawnSync([process.execPath, join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "."], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  expect(tsc.stdout.toString() + tsc.stderr.toString()).toBe("");
  expect(tsc.exitCode).toBe(0);

  const run = Bun.spawnSync([process.execPath, "client.ts"], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  expect(run.stderr.toString()).toBe("");
  const out = JSON.parse(run.stdout.toString());
  expect(out).toMatchObject({ kind: "editable", size: 9, titles: ["From a generated client"], total: "1", missing: 404, code: "not_found" });
  expect(out.id).toStartWith("note_");
  expect(typeof out.remaining).toBe("number");
}, 60_000);
