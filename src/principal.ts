import type { RateLimits } from "./limits/plans";

export type Scope = "read" | "write" | "append";

/** Who is calling: a token and the one workspace it belongs to. */
export interface Principal {
  tokenId: string;
  accountId: string;
  workspaceId: string;
  scopes: ReadonlySet<Scope>;
  /** Pinned note: the token sees no other note. */
  noteId: string | null;
  kind: "api" | "extension";
  /** Requests per minute by bucket; null for no limit. */
  rate: RateLimits | null;
  /** When the token stops working: its expiry, or a lapsed workspace's end of read access. */
  validUntil: number;
}
