import { and, eq, lt, or } from "drizzle-orm";
import { sharedDatabase } from "../db/store";
import { idempotencyKeys } from "../db/tables";
import type { Deps, IdempotentWrite } from "../deps";
import type { Principal } from "../principal";
import { sha256Hex } from "../lib/secrets";
import { AppError } from "./errors";

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** The status of a key's row while its request runs (instances sharing PostgreSQL hold keys with rows). */
const IN_FLIGHT = 0;
/** An in-flight row older than this belongs to an instance that died mid-request: the key is free again. */
const IN_FLIGHT_MS = 5 * 60_000;
export const MAX_KEY_LENGTH = 255;

/**
 * Answers that are never stored: a refusal of who is asking (401, 403) or of how often (429) says
 * nothing about the request, and storing one would let it stand in for the real answer later.
 */
export function storableStatus(status: number): boolean {
  return status < 500 && status !== 401 && status !== 403 && status !== 429;
}

function isIdempotencyMethod(method: string): boolean {
  return method === "POST" || method === "PATCH" || method === "DELETE";
}

/** A write that carries an Idempotency-Key and is now running. */
class Claim implements IdempotentWrite {
  /** Set once the answer is stored (inside the write's own transaction, when there is one). */
  saved = false;
  constructor(
    private readonly deps: Deps,
    readonly tokenId: string,
    readonly workspaceId: string,
    readonly key: string,
    readonly method: string,
    readonly path: string,
    readonly bodyHash: string,
  ) {}

  /**
   * Holds the key for this request across instances: an in-flight row, unless another request holds
   * it (an in-flight row of its own younger than IN_FLIGHT_MS: older ones belong to an instance that
   * died) or its answer is stored. True when this request holds it.
   */
  async hold(): Promise<boolean> {
    const now = this.deps.clock.now();
    const row = this.row(IN_FLIGHT, "");
    const taken = await this.deps.db
      .insert(idempotencyKeys)
      .values(row)
      .onConflictDoUpdate({
        target: [idempotencyKeys.tokenId, idempotencyKeys.key],
        set: row,
        setWhere: or(lt(idempotencyKeys.expiresAt, now), and(eq(idempotencyKeys.status, IN_FLIGHT), lt(idempotencyKeys.createdAt, now - IN_FLIGHT_MS))),
      })
      .returning({ key: idempotencyKeys.key });
    return taken.length === 1;
  }

  /** The request ended without an answer to keep (a 401, a 5xx): the key is free again. */
  async letGo(): Promise<void> {
    await this.deps.db
      .delete(idempotencyKeys)
      .where(and(eq(idempotencyKeys.tokenId, this.tokenId), eq(idempotencyKeys.key, this.key), eq(idempotencyKeys.status, IN_FLIGHT)));
  }

  private row(status: number, responseBody: string) {
    const now = this.deps.clock.now();
    return {
      tokenId: this.tokenId,
      workspaceId: this.workspaceId,
      key: this.key,
      method: this.method,
      path: this.path,
      bodyHash: this.bodyHash,
      status,
      responseBody,
      createdAt: now,
      expiresAt: now + IDEMPOTENCY_WINDOW_MS,
    };
  }

  /** Inside the write it answers, so the answer commits with the write. */
  async store(status: number, body: string): Promise<void> {
    const row = this.row(status, body);
    await this.deps.db
      .insert(idempotencyKeys)
      .values(row)
      .onConflictDoUpdate({ target: [idempotencyKeys.tokenId, idempotencyKeys.key], set: row });
    this.saved = true;
  }
}

/**
 * Idempotency-Key on POST, PATCH and DELETE. Keys belong to the token that sent them (as Stripe
 * keys them by API key). `assertReplayable` checks what may have changed since the stored answer
 * (the account's state); the same token sent the stored request, so its scope and pin were
 * checked then.
 */
export function idempotency(deps: Deps, assertReplayable: (principal: Principal) => Promise<void>) {
  const running = new Set<string>();

  /**
   * Runs `next` at most once per key: a stored answer to the same request is replayed; the same
   * key on another method, path or body is 422; a key still running is 409. `body` is the
   * request's text when the boundary read it already.
   */
  return async function once(
    request: Request,
    principal: Principal | undefined,
    path: string,
    body: string | null,
    next: (write?: IdempotentWrite) => Promise<Response>,
  ): Promise<Response> {
    const key = request.headers.get("idempotency-key");
    const method = request.method;
    if (key === null || !principal || !isIdempotencyMethod(method)) return next();
    if (key.length < 1 || key.length > MAX_KEY_LENGTH) {
      throw new AppError("bad_request", `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters`);
    }
    const raw = body ?? (request.body ? Buffer.from(await request.clone().arrayBuffer()).toString("latin1") : "");
    const bodyHash = sha256Hex(raw);
    const lookup = async () => {
      const [row] = await deps.db
        .select()
        .from(idempotencyKeys)
        .where(and(eq(idempotencyKeys.tokenId, principal.tokenId), eq(idempotencyKeys.key, key)));
      return row && row.expiresAt > deps.clock.now() ? row : undefined;
    };
    const replay = async (stored: typeof idempotencyKeys.$inferSelect): Promise<Response> => {
      await assertReplayable(principal);
      if (stored.method !== method || stored.path !== path || stored.bodyHash !== bodyHash) {
        throw new AppError(
          "idempotency_key_reused",
          `this Idempotency-Key was used for ${stored.method} ${stored.path} with another body; use a new key for a new request`,
        );
      }
      return new Response(stored.responseBody, {
        status: stored.status,
        headers: { "content-type": "application/json; charset=utf-8", "idempotent-replay": "true" },
      });
    };
    const inProgress = () => new AppError("idempotency_in_progress", "a request with this Idempotency-Key is still being processed; retry shortly");
    const stored = await lookup();
    if (stored && stored.status !== IN_FLIGHT) return replay(stored);
    const runningKey = `${principal.tokenId}\u0000${key}`;
    if (running.has(runningKey)) throw inProgress();
    running.add(runningKey);
    const claim = new Claim(deps, principal.tokenId, principal.workspaceId, key, method, path, bodyHash);
    let heldRow = false;
    try {
      // The key is held now. A run of it may have finished (and stored its answer) while the lookup
      // above waited for the database: look once more, so it is replayed rather than run twice.
      const storedMeanwhile = await lookup();
      if (storedMeanwhile && storedMeanwhile.status !== IN_FLIGHT) return replay(storedMeanwhile);
      // Instances sharing the database hold the key with a row as well: a retry that reaches another
      // instance meanwhile gets 409 there too, and the replay once the answer is stored.
      if (sharedDatabase(deps.store)) {
        heldRow = await deps.writer.write(() => claim.hold());
        if (!heldRow) {
          const now = await lookup();
          if (now && now.status !== IN_FLIGHT) return replay(now);
          throw inProgress();
        }
      }
      const response = await next(claim);
      // Writes stored their answer in their own transaction; other storable answers are stored now.
      if (!claim.saved && storableStatus(response.status)) {
        const text = await response.clone().text();
        await deps.writer.write(() => claim.store(response.status, text));
      }
      return response;
    } finally {
      running.delete(runningKey);
      if (heldRow && !claim.saved) await deps.writer.write(() => claim.letGo()).catch(() => {});
    }
  };
}

/** Drops records past their 24 hours (a periodic task). */
export async function purgeExpiredKeys(deps: Deps): Promise<number> {
  const gone = await deps.db
    .delete(idempotencyKeys)
    .where(lt(idempotencyKeys.expiresAt, deps.clock.now()))
    .returning({ key: idempotencyKeys.key });
  return gone.length;
}
