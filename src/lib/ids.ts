import { randomBase62 } from "./random";

export type IdKind = "acct" | "ws" | "note" | "fold" | "tok" | "snap" | "dlv" | "ibx" | "exp" | "chn" | "dgs";

/** Opaque ids with a kind prefix, e.g. `note_3kTMd…`. 20 base62 characters is ~119 bits. */
export function newId(kind: IdKind): string {
  return `${kind}_${randomBase62(20)}`;
}
