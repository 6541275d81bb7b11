import { pgTable, text } from "drizzle-orm/pg-core";

// The PostgreSQL twin of src/db/schema/meta.ts: which notestream last migrated the database.

export const appMeta = pgTable("app_meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});
