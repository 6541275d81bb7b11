import { defineConfig } from "drizzle-kit";

// The PostgreSQL twin of drizzle.config.ts (SQLite): `make migration-pg name=…` generates from it.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/pg/schema/index.ts",
  out: "./migrations-pg",
});
