import type { Database } from "bun:sqlite";
import type { Principal } from "../../deps";

/**
 * Resolved tokens, by the secret itself (which every request carries anyway), so the hot path
 * neither hashes nor queries. Only the database keeps tokens as SHA-256 alone. Anything that changes a
 * token, a plan or an account state in this process calls clear(); a change committed by
 * another process (the command line) shows up in SQLite's data_version, which also clears it.
 */
export class TokenCache {
  private entries = new Map<string, Principal>();
  private dataVersion: number;
  private checkedAt = 0;
  private readonly versionQuery;

  constructor(sqlite: Database) {
    this.versionQuery = sqlite.query<{ data_version: number }, []>("PRAGMA data_version");
    this.dataVersion = this.readVersion();
  }

  get(secret: string): Principal | undefined {
    // Another process's change is noticed within 50 ms; this process's own changes clear at once.
    const now = performance.now();
    if (now - this.checkedAt > 50) {
      this.checkedAt = now;
      const v = this.readVersion();
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

  clear(): void {
    this.entries.clear();
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

  /**
   * SQLite only: PRAGMA data_version (a number that moves when another connection commits), read
   * synchronously so a cache hit costs no await. PostgreSQL has no such number; its store will need
   * its own way to hear of another process's token changes.
   */
  private readVersion(): number {
    return this.versionQuery.get()!.data_version;
  }
}
