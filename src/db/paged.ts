import { count, type SQL } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Page } from "../lib/pagination";
import type { Db } from "./client";

/** A select with its filter and order set, waiting for its page. */
interface OrderedSelect<Row> {
  limit(limit: number): { offset(offset: number): PromiseLike<Row[]> };
}

/**
 * One page of a list and the size of the whole list (X-Total-Count), as every list answers.
 * The count runs on `from` with `where` alone, so what `rows` joins in (a folder's note count)
 * changes neither the total nor the page; `rows` must filter with the same `where`. `kept`: the
 * list's size where a counter holds it (a read of one row, at any size), so nothing is counted.
 */
export async function paged<Row>(
  db: Db,
  list: { from: SQLiteTable; where: SQL | undefined; rows: OrderedSelect<Row>; page: Page; kept?: number },
): Promise<{ items: Row[]; total: number }> {
  const total = list.kept ?? (await db.select({ n: count() }).from(list.from).where(list.where))[0]!.n;
  const items = await list.rows.limit(list.page.limit).offset(list.page.offset);
  return { items, total };
}
