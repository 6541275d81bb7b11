// The PostgreSQL schema: one file per file of src/db/schema/, the same tables, columns and
// indexes (test/unit/pg-schema-parity.test.ts holds them in step). Migrations are generated
// from it into migrations-pg/ by `make migration-pg name=…`.
export * from "./accounts";
export * from "./notes";
export * from "./channels";
export * from "./tokens";
export * from "./requests";
export * from "./jobs";
export * from "./exports";
export * from "./oauth";
export * from "./billing";
export * from "./meta";
