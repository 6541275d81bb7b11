/**
 * `make packages` as a user meets it: the three files at the service's version, and the service's
 * own package added with `bun add` to a fresh project whose `bun test` starts notestream in its
 * own process through notestream/testing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanup, ROOT, tempDir } from "../helpers/binary";

const version = (await Bun.file(join(ROOT, "package.json")).json()).version as string;
let app = "";

function run(cmd: string[], cwd: string, timeoutMs = 120_000) {
  const r = Bun.spawnSync(cmd, { cwd, env: { ...process.env, NOTESTREAM_DATABASE_URL: "" }, stdout: "pipe", stderr: "pipe", timeout: timeoutMs });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed (${r.exitCode}): ${r.stderr.toString()}${r.stdout.toString()}`);
  return r.stdout.toString() + r.stderr.toString();
}

beforeAll(() => {
  run(["bash", "scripts/packages.sh"], ROOT, 240_000);
  app = tempDir("bun-app");
}, 300_000);

afterAll(() => cleanup());

test("make packages writes the JavaScript client, the service and the Python wheel, at the service's version", () => {
  const files = readdirSync(join(ROOT, "dist/packages"));
  expect(files).toEqual(expect.arrayContaining([`notestream-client-${version}.tgz`, `notestream-${version}.tgz`, `notestream-${version}-py3-none-any.whl`]));
});

test("bun add of the service's package, then a user's bun test against notestream/testing: in process, in memory, a clock to advance, the mails", () => {
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "my-job", private: true, type: "module" }));
  run(["bun", "add", join(ROOT, "dist/packages", `notestream-${version}.tgz`)], app, 180_000);
  writeFileSync(
    join(app, "job.test.ts"),
    `import { expect, test } from "bun:test";
     import { startTestServer } from "notestream/testing";
     test("my job's stream goes late when the job stops writing", async () => {
       const ns = await startTestServer({ clock: Date.parse("2026-11-27T10:00:00Z") });
       const headers = { authorization: "Bearer " + (await ns.token()), "content-type": "application/json" };
       const res = await fetch(ns.url + "/api/v1/notes/by-filename/job.log/append", { method: "POST", headers, body: JSON.stringify({ text: "ran" }) });
       expect(res.status).toBe(201);
       const { id } = await res.json();
       await fetch(ns.url + "/api/v1/notes/" + id, { method: "PATCH", headers, body: JSON.stringify({ note: { expected_interval_seconds: 3600 } }) });
       await ns.advance(3_599_000);
       expect(ns.mails()).toHaveLength(0);
       await ns.advance(1_000);
       expect(ns.mails().map((m) => m.subject)).toEqual(["[notestream] job.log has gone quiet"]);
       // The mail's links name the port the test server got.
       const ack = ns.mails()[0].text.split(/\\s+/).find((w) => w.includes("/ack/"));
       expect(new URL(ack).port).toBe(new URL(ns.url).port);
       expect((await fetch(ack)).status).toBe(200);
       await ns.stop();
     });`,
  );
  const out = run(["bun", "test"], app);
  expect(out).toContain("1 pass");
  // Nothing on disk: the project holds what it had, and no data directory appeared.
  expect(readdirSync(app).sort()).toEqual(["bun.lock", "job.test.ts", "node_modules", "package.json"]);
}, 240_000);
