import type { Principal } from "../../principal";
import type { OtherWriters } from "../../db/other-writers";

/**
 * Resolved tokens, by the secret itself (which every request carries anyway), so the hot path
 * neither hashes nor queries. Only the database keeps tokens as SHA-256 alone. Anything that changes a
 * token, a plan or an account state in this process calls clear(), which tells the other
 * processes too; a change committed by another process (the command line, another instance)
 * moves `otherWriters.version()`, which also clears it.
 */
export class TokenCache {
  private entries = new Map<string, Principal>();
  private dataVersion: number;
  private checkedAt = 0;
  constructor(private readonly otherWriters: OtherWriters) {
    this.dataVersion = otherWriters.version();
  }

  get(secret: string): Principal | undefined {
    // Another process's change is noticed within 50 ms; this process's own changes clear at once.
    const now = performance.now();
    if (now - this.checkedAt > 50) {
      this.checkedAt = now;
      const v = this.otherWriters.version();
      if (v !== this.dataVersion) {
        this.dataVersion = v;
        this.entries.clear();
        return undefined;
      }
    }
    return this.entries.get(secret);
  }

  set(secret: string, principal: Principal): void {
    if (this.entries.size > 50_000) this.entries.clear();
    this.entries.set(secret, principal);
  }

  /** Call inside the write that changes a token, plan or account state (the other processes hear of it once it commits). */
  clear(): void {
    this.entries.clear();
    this.otherWriters.announce();
  }

  // Last use of each token, kept in memory and written once a minute: no write per request.
  private used = new Map<string, number>();

  touch(tokenId: string, at: number): void {
    this.used.set(tokenId, at);
  }

  /** Hands over the uses seen since the last call. */
  takeUses(): Map<string, number> {
    const uses = this.used;
    this.used = new Map();
    return uses;
  }
}
