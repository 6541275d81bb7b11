import { sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Facts about the database itself: which notestream last migrated it (for the version guard). */
export const appMeta = sqliteTable("app_meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});
