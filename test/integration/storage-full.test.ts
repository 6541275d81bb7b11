/**
 * A full disk through the whole service, in process: SQLite that may grow no further (its
 * max_page_count reached answers SQLITE_FULL, as a full disk does) and PostgreSQL answering
 * SQLSTATE 53100 disk_full (raised by a trigger, through the real driver). Writes answer 507
 * storage_full with Retry-After; reads and /up answer; /up/deep fails naming the disk; deletes and
 * purges still run, and room they give back ends the spell. test/e2e/disk-full.test.ts fills a
 * real disk with the compiled binary.
 */
import { afterEach, expect, test } from "bun:test";
import { sqlRun } from "../../src/db/sql";
import { runAllTasks } from "../../src/schedule";
import { errorOf, harness, onPostgres, type Harness, type TestResponse } from "../helpers/harness";
import { parsePrometheusText, valueOf } from "../helpers/prom-text";

const METRICS_TOKEN = "storage-full-metrics-token-0123";
const LINE = "x".repeat(60_000);

let h: Harness;
afterEach(() => h.close());

async function setup(): Promise<string> {
  // No plan cap or rate limit in the way of a few MB of appends.
  h = await harness({ profile: "unlimited", env: { NOTESTREAM_METRICS_TOKEN: METRICS_TOKEN } });
  // The scheduler's heartbeat, so that /up/deep's other checks pass.
  await runAllTasks(h.deps);
  return h.token(await h.account("dev"));
}

const append = (token: string, filename: string, text = LINE) =>
  h.request("POST", `/api/v1/notes/by-filename/${filename}/append`, { token, body: { text } });

async function expectStorageFull(res: TestResponse): Promise<void> {
  expect(res.status).toBe(507);
  expect((await errorOf(res)).code).toBe("storage_full");
  expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
}

async function storageFullMetric(): Promise<number | undefined> {
  const res = await h.request("GET", "/metrics", { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  return valueOf(parsePrometheusText(await res.text()), "notestream_storage_full");
}

/** /up/deep's status, its disk check, and which of its checks fail. */
async function deep(): Promise<{ status: number; disk: { status: string; detail?: string }; failing: string[] }> {
  const res = await h.request("GET", "/up/deep");
  const { checks } = (await res.json()) as { checks: Record<string, { status: string; detail?: string }> };
  return { status: res.status, disk: checks.disk!, failing: Object.keys(checks).filter((k) => checks[k]!.status !== "ok") };
}
const healthy = { status: 200, disk: { status: "ok" }, failing: [] };

test.skipIf(onPostgres)(
  "SQLite that cannot grow: writes answer 507 storage_full with Retry-After, reads, exports already built and /up answer, /up/deep names the disk; delete and purge run, and the pages they free take appends again",
  async () => {
    const token = await setup();
    for (const name of ["a.log", "b.log"]) for (let i = 0; i < 25; i++) expect((await append(token, name)).status).toBeLessThan(300);
    const a = await (await h.request("GET", "/api/v1/notes/by-filename/a.log", { token })).json();
    // An export built before the disk fills.
    h.deps.mailer = { send: async () => {} };
    const queued = await (await h.request("POST", "/api/v1/export", { token })).json();
    await h.jobs.drain();
    const built = await (await h.request("GET", `/api/v1/export/${queued.id}`, { token })).json();
    expect(built.status).toBe("ready");
    expect(await deep()).toEqual(healthy);
    expect(await storageFullMetric()).toBe(0);

    // The database may take no page more than it has: SQLite answers SQLITE_FULL.
    const sqlite = h.deps.db.$client;
    const pages = (sqlite.query("PRAGMA page_count").get() as { page_count: number }).page_count;
    sqlite.run(`PRAGMA max_page_count = ${pages}`);

    let refused: TestResponse | null = null;
    for (let i = 0; i < 50 && !refused; i++) {
      const res = await append(token, "b.log");
      if (res.status >= 300) refused = res;
    }
    await expectStorageFull(refused!);
    // Every other write is refused before it reaches the database, with the same answer.
    await expectStorageFull(await append(token, "new.log", "short"));
    await expectStorageFull(await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "t", plain_body: "b" } } }));
    await expectStorageFull(await h.request("PATCH", `/api/v1/notes/${a.id}`, { token, body: { note: { title: "renamed" } } }));

    expect((await h.request("GET", `/api/v1/notes/${a.id}`, { token })).status).toBe(200);
    expect((await h.request("GET", "/up")).status).toBe(200);
    const download = await h.request("GET", new URL(built.download_url).pathname, { token });
    expect(download.status).toBe(200);
    expect((await download.arrayBuffer()).byteLength).toBe(built.size_bytes);
    // The periodic tasks are refused too, quietly: the scheduler stays healthy, the disk is what fails.
    await runAllTasks(h.deps);
    const full = await deep();
    expect(full.status).toBe(503);
    expect(full.failing).toEqual(["disk"]);
    expect(full.disk.detail).toContain("data directory's disk is full");
    expect(await storageFullMetric()).toBe(1);

    // Room made through the API: a.log to the trash, then purged from it (about 1.5 MB of pages).
    expect((await h.request("DELETE", `/api/v1/notes/${a.id}`, { token })).status).toBe(200);
    const purged = await h.request("DELETE", `/api/v1/trash/${a.id}`, { token });
    expect(purged.status).toBe(200);
    expect(await purged.json()).toEqual({ id: a.id, purged: true });

    // The spell is over: appends are taken again, into the freed pages (the file does not grow).
    expect(await deep()).toEqual(healthy);
    expect(await storageFullMetric()).toBe(0);
    expect((await append(token, "b.log")).status).toBe(200);
    expect((await append(token, "c.log", "short")).status).toBe(201);
    expect((sqlite.query("PRAGMA page_count").get() as { page_count: number }).page_count).toBe(pages);
  },
);

test.skipIf(!onPostgres)(
  "PostgreSQL's disk_full (SQLSTATE 53100): writes answer 507 storage_full with Retry-After, reads answer, /up/deep names PostgreSQL's disk until a write is taken again",
  async () => {
    const token = await setup();
    const a = await (await append(token, "a.log", "first")).json();
    await sqlRun(
      h.deps.store,
      `CREATE FUNCTION test_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$`,
    );
    await sqlRun(h.deps.store, "CREATE TRIGGER test_disk_full BEFORE INSERT ON note_chunks FOR EACH ROW EXECUTE FUNCTION test_disk_full()");
    await sqlRun(h.deps.store, "CREATE TRIGGER test_disk_full BEFORE INSERT ON notes FOR EACH ROW EXECUTE FUNCTION test_disk_full()");

    await expectStorageFull(await append(token, "a.log", "second"));
    await expectStorageFull(await h.request("POST", "/api/v1/notes", { token, body: { note: { title: "t" } } }));
    const read = await h.request("GET", `/api/v1/notes/${a.id}`, { token });
    expect(read.status).toBe(200);
    expect((await read.json()).plain_body).toBe("first\n");
    const full = await deep();
    expect(full.status).toBe(503);
    expect(full.failing).toEqual(["disk"]);
    expect(full.disk.detail).toContain("PostgreSQL's disk is full");
    expect(await storageFullMetric()).toBe(1);

    // The database has room again: the next write is taken and ends the spell.
    await sqlRun(h.deps.store, "DROP TRIGGER test_disk_full ON note_chunks");
    await sqlRun(h.deps.store, "DROP TRIGGER test_disk_full ON notes");
    expect((await append(token, "a.log", "third")).status).toBe(200);
    expect(await deep()).toEqual(healthy);
    expect(await storageFullMetric()).toBe(0);
    expect((await (await h.request("GET", `/api/v1/notes/${a.id}`, { token })).json()).plain_body).toBe("first\nthird\n");
  },
);
