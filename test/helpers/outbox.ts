import { expect } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { errorOf } from "./harness";

/** The mails the service wrote to the data dir's outbox, oldest first, quoted-printable's soft line breaks undone so a sentence reads whole. */
export function outboxMails(dataDir: string): string[] {
  const dir = join(dataDir, "outbox");
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith(".eml")).sort();
  } catch {
    return [];
  }
  return files.map((f) => readFileSync(join(dir, f), "utf8").replaceAll("=\n", ""));
}

/** A 422 validation_failed whose first problem names this field with this code. */
export async function expectFieldError(res: Response, field: string, code: string): Promise<void> {
  expect(res.status).toBe(422);
  const error = await errorOf(res as never);
  expect(error.code).toBe("validation_failed");
  expect(error.details[0]).toMatchObject({ field, code });
}
