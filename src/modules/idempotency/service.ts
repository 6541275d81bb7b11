import { and, eq } from "drizzle-orm";
import type { Deps } from "../../deps";
import { idempotencyKeys } from "../../db/schema";
import { AppError } from "../../http/errors";
import { sha256Hex } from "../../lib/secrets";
import { assertWritable, getWorkspace } from "../workspaces/repo";

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
export const MAX_KEY_LENGTH = 255;

/** A write that carries an Idempotency-Key and is now running. */
export interface IdempotencyClaim {
  tokenId: string;
  workspaceId: string;
  key: string;
  method: string;
  path: string;
  bodyHash: string;
  /** Set once the answer is stored (inside the write's own transaction, when there is one). */
  saved: boolean;
}

export interface StoredReply {
  status: number;
  body: string;
}

export function idempotencyMethod(method: string): boolean {
  return method === "POST" || method === "PATCH" || method === "DELETE";
}

export function validateKey(key: string): void {
  if (key.length < 1 || key.length > MAX_KEY_LENGTH) {
    throw new AppError("bad_request", `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters`);
  }
}

/**
 * Answers that are never stored: a refusal of who is asking (401, 403) or of how often (429) says
 * nothing about the request, and storing one would let it stand in for the real answer later.
 */
export function storableStatus(status: number): boolean {
  return status < 500 && status !== 401 && status !== 403 && status !== 429;
}

/**
 * Looks the key up, among the calling token's own keys: a stored answer to the same request is
 * replayed; the same key on another method, path or body is 422; a key still running is 409;
 * otherwise the caller holds a claim. The same token sent the stored request, so its scope and
 * pin were checked then; the account's state is checked again here, before anything is replayed.
 */
export function claimKey(
  deps: Deps,
  running: Set<string>,
  input: { tokenId: string; workspaceId: string; key: string; method: string; path: string; body: Uint8Array | string },
): { replay: StoredReply } | { claim: IdempotencyClaim } {
  const bodyHash = sha256Hex(typeof input.body === "string" ? input.body : Buffer.from(input.body).toString("latin1"));
  const stored = deps.db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.tokenId, input.tokenId), eq(idempotencyKeys.key, input.key)))
    .get();
  if (stored && stored.expiresAt > deps.clock.now()) {
    assertWritable(getWorkspace(deps, input.workspaceId));
    if (stored.method !== input.method || stored.path !== input.path || stored.bodyHash !== bodyHash) {
      throw new AppError(
        "idempotency_key_reused",
        `this Idempotency-Key was used for ${stored.method} ${stored.path} with another body; use a new key for a new request`,
      );
    }
    return { replay: { status: stored.status, body: stored.responseBody } };
  }
  const runningKey = `${input.tokenId}\u0000${input.key}`;
  if (running.has(runningKey)) {
    throw new AppError("idempotency_in_progress", "a request with this Idempotency-Key is still being processed; retry shortly");
  }
  running.add(runningKey);
  return { claim: { tokenId: input.tokenId, workspaceId: input.workspaceId, key: input.key, method: input.method, path: input.path, bodyHash, saved: false } };
}

export function releaseClaim(running: Set<string>, claim: IdempotencyClaim): void {
  running.delete(`${claim.tokenId}\u0000${claim.key}`);
}

/** Stores the answer; inside a write's transaction this commits with the write itself. */
export function saveReply(deps: Deps, claim: IdempotencyClaim, status: number, body: string): void {
  const now = deps.clock.now();
  const row = {
    tokenId: claim.tokenId,
    workspaceId: claim.workspaceId,
    key: claim.key,
    method: claim.method,
    path: claim.path,
    bodyHash: claim.bodyHash,
    status,
    responseBody: body,
    createdAt: now,
    expiresAt: now + IDEMPOTENCY_WINDOW_MS,
  };
  deps.db
    .insert(idempotencyKeys)
    .values(row)
    .onConflictDoUpdate({ target: [idempotencyKeys.tokenId, idempotencyKeys.key], set: row })
    .run();
  claim.saved = true;
}

/** Drops records past their 24 hours (a periodic job). */
export function purgeExpiredKeys(deps: Deps): number {
  return deps.db.$client.run("DELETE FROM idempotency_keys WHERE expires_at < ?", [deps.clock.now()]).changes;
}
