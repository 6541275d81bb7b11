/**
 * notestream-client as a user meets it: packed by scripts/build-js-client.sh, installed with npm
 * from the tarball into a fresh directory, used from Node against the compiled binary, and its
 * types compiled under tsc --strict in a consumer's project.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildBinary, cleanup, provision, ROOT, startServer, tempDir, type RunningServer } from "../helpers/binary";

let server: RunningServer;
let dataDir = "";
let token = "";
let app = "";

function run(cmd: string[], cwd: string, env: Record<string, string> = {}) {
  const r = Bun.spawnSync(cmd, { cwd, env: { ...process.env, NOTESTREAM_DATABASE_URL: "", ...env }, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed (${r.exitCode}): ${r.stderr.toString()}${r.stdout.toString()}`);
  return r.stdout.toString();
}

beforeAll(async () => {
  buildBinary();
  dataDir = tempDir("data");
  token = provision(dataDir).token;
  server = await startServer(dataDir, { NOTESTREAM_LOG_REQUESTS: "false" });
  run(["bash", "scripts/build-js-client.sh", "--pack"], ROOT);
  const tgz = readdirSync(join(ROOT, "dist/packages")).find((f) => /^notestream-client-.*\.tgz$/.test(f))!;
  app = tempDir("js-app");
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "uses-notestream", private: true, type: "module" }));
  run(["npm", "install", "--no-audit", "--no-fund", "--prefer-offline", join(ROOT, "dist/packages", tgz)], app);
}, 180_000);

afterAll(() => cleanup());

/** Runs a script in the consumer's directory under Node, with the server's URL and token. */
function node(source: string): string {
  writeFileSync(join(app, "script.mjs"), source);
  return run(["node", "script.mjs"], app, { URL: server.base, TOKEN: token });
}

test("under Node, from the installed tarball: append, lines, notes, folders, search, and the error envelope", () => {
  const out = node(`
    import { Notestream, NotestreamError } from "notestream-client";
    const ns = new Notestream({ url: process.env.URL, token: process.env.TOKEN });
    const a = await ns.append("deploys.log", "deploy 41 ok", { idempotencyKey: "k-41" });
    const again = await ns.append("deploys.log", "deploy 41 ok", { idempotencyKey: "k-41" });
    await ns.append("deploys.log", "deploy 42 FAILED", { status: "fail" });
    const lines = await ns.lines("deploys.log", { last: 10 });
    const after = await ns.lines("deploys.log", { cursor: lines.lines[0].cursor, limit: 5 });
    const folder = await ns.folders.create("ops");
    const note = await ns.notes.create({ title: "runbook", plain_body: "restart the zanzibar worker" });
    const moved = await ns.notes.move(note.id, folder.id);
    const listed = await ns.notes.list({ folderId: folder.id });
    const errors = [];
    for (const f of [() => ns.notes.get("note_missing"), () => ns.lines("deploys.log", { last: 0 })]) {
      try { await f(); } catch (e) { errors.push({ isError: e instanceof NotestreamError, status: e.status, code: e.code, details: e.details }); }
    }
    console.log(JSON.stringify({ a, again, lines: lines.lines.map((l) => l.text), after: after.lines.map((l) => l.text), moved: moved.folder_id === folder.id, listed: listed.items.map((n) => n.title), total: listed.total, errors }));
  `);
  const r = JSON.parse(out);
  expect(r.a).toMatchObject({ filename: "deploys.log", created: true });
  expect(r.again).toEqual(r.a);
  expect(r.lines).toEqual(["deploy 41 ok", "deploy 42 FAILED"]);
  expect(r.after).toEqual(["deploy 42 FAILED"]);
  expect(r.moved).toBe(true);
  expect(r).toMatchObject({ listed: ["runbook"], total: 1 });
  expect(r.errors[0]).toEqual({ isError: true, status: 404, code: "not_found", details: undefined });
  expect(r.errors[1]).toMatchObject({ isError: true, status: 422, code: "validation_failed", details: [{ field: "last" }] });
});

test("search finds what was appended, once the index has caught up", async () => {
  await Bun.sleep(2_500);
  const out = node(`
    import { Notestream } from "notestream-client";
    const ns = new Notestream({ url: process.env.URL, token: process.env.TOKEN });
    const found = await ns.search("zanzibar");
    console.log(JSON.stringify({ titles: found.items.map((h) => h.title), total: found.total }));
  `);
  expect(JSON.parse(out)).toEqual({ titles: ["runbook"], total: 1 });
});

test("follow yields each new line once, in order, across a server restart", async () => {
  writeFileSync(
    join(app, "follow.mjs"),
    `import { Notestream } from "notestream-client";
     const ns = new Notestream({ url: process.env.URL, token: process.env.TOKEN });
     for await (const line of ns.follow("follow.log")) {
       console.log(line.text);
       if (line.text === "the end") break;
     }`,
  );
  const proc = Bun.spawn(["node", "follow.mjs"], { cwd: app, env: { ...process.env, URL: server.base, TOKEN: token }, stdout: "pipe", stderr: "pipe" });
  let seen = "";
  void (async () => {
    for await (const chunk of proc.stdout) seen += new TextDecoder().decode(chunk);
  })();
  const append = (text: string) => fetch(`${server.base}/api/v1/notes/by-filename/follow.log/append`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ text }) });
  const until = async (text: string) => {
    const deadline = Date.now() + 15_000;
    while (!seen.includes(text)) {
      if (Date.now() > deadline) throw new Error(`follow never printed ${text}; got ${JSON.stringify(seen)}`);
      await Bun.sleep(20);
    }
  };
  await append("before");
  await Bun.sleep(500);
  await append("live");
  await until("live\n");
  await server.stop("SIGTERM");
  server = await startServer(dataDir, { NOTESTREAM_LOG_REQUESTS: "false", NOTESTREAM_PORT: String(server.port) });
  // Two lines in one append: resuming from anything but the last id seen loses or repeats one.
  await append("gap 1\ngap 2");
  await append("the end");
  await until("the end\n");
  expect(await proc.exited).toBe(0);
  expect(seen).toBe("live\ngap 1\ngap 2\nthe end\n");
}, 40_000);

test("the types compile under tsc --strict in a consumer's project, and catch a wrong field", () => {
  const tsc = join(ROOT, "node_modules/.bin/tsc");
  const config = { compilerOptions: { strict: true, module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", lib: ["ES2022", "DOM"], noEmit: true, types: [] }, include: ["use.ts"] };
  writeFileSync(join(app, "tsconfig.json"), JSON.stringify(config));
  writeFileSync(
    join(app, "use.ts"),
    `import { Notestream, NotestreamError, type Note } from "notestream-client";
     const ns = new Notestream({ url: "http://localhost:8080", token: "nst_x" });
     export async function f(): Promise<string | null> {
       const r = await ns.append("a.log", "x", { status: "ok" });
       const n: Note = await ns.notes.get(r.id);
       try { await ns.lines("a.log", { cursor: "c", limit: 5 }); } catch (e) { if (e instanceof NotestreamError) return e.code; }
       return n.filename;
     }`,
  );
  run([tsc, "-p", "."], app);
  writeFileSync(join(app, "use.ts"), `import { Notestream } from "notestream-client";\nconst ns = new Notestream({ url: "u", token: "t" });\nexport const x = ns.append("a.log", "x", { status: "done" });\n`);
  expect(() => run([tsc, "-p", "."], app)).toThrow(/"done"' is not assignable/);
});
