import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const PID_FILE = "notestream.pid";

/** Marks the data directory as served by this process until the returned function is called. */
export function markServing(dataDir: string): () => void {
  const path = join(dataDir, PID_FILE);
  writeFileSync(path, `${process.pid}\n`);
  return () => rmSync(path, { force: true });
}

/** The pid of a live server on this data directory, if any (a pid file left by a killed server is ignored). */
export function servingPid(dataDir: string): number | null {
  const path = join(dataDir, PID_FILE);
  if (!existsSync(path)) return null;
  const pid = Number(readFileSync(path, "utf8").trim());
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else: still a server.
    return (e as { code?: string }).code === "EPERM" ? pid : null;
  }
}
