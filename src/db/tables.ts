import { databaseKind } from "../config";
import type { Db } from "./client";
import type { PgDb } from "./pg/client";
import * as pg from "./pg/schema";
import * as sqlite from "./schema";

/**
 * The tables the services query, as the database of this process has them: PostgreSQL's twins
 * (src/db/pg/schema, same columns and JS types: test/unit/pg-schema-parity.test.ts) when
 * NOTESTREAM_DATABASE_URL is set, SQLite's (src/db/schema) otherwise. Queries written once with
 * drizzle's builder then produce each database's SQL with each database's value mapping
 * (booleans, bigint byte counts).
 *
 * Chosen from the configuration when this module loads, before any other module builds on a table
 * (a column list, an ORDER BY kept in a constant): a process uses one database for its life, and
 * runtime.ts refuses to open the other one (`assertTablesOf`).
 *
 * The one place PostgreSQL's tables and builder are typed as SQLite's (`sharedBuilder`): drizzle
 * has no builder type common to both dialects, and the services write each query once. What makes it sound is checked, not assumed: test/unit/pg-schema-parity.test.ts
 * (the same columns with the same JS types) and the whole suite's second run on PostgreSQL.
 * Code that needs a dialect's own client takes it from `Deps.store`, typed as what it is.
 */
const dialect = databaseKind();
const t = dialect === "postgres" ? (pg as unknown as typeof sqlite) : sqlite;

/** PostgreSQL's builder as the services see it, with the tables above (the other half of the seam). */
export function sharedBuilder(db: PgDb): Db {
  return db as unknown as Db;
}

export const accountLinks = t.accountLinks;
export const ackLinks = t.ackLinks;
export const alertLog = t.alertLog;
export const accounts = t.accounts;
export const apiErrors = t.apiErrors;
export const appMeta = t.appMeta;
export const billingCheckouts = t.billingCheckouts;
export const billingEvents = t.billingEvents;
export const billingSubscriptions = t.billingSubscriptions;
export const channels = t.channels;
export const digests = t.digests;
export const exportFiles = t.exportFiles;
export const exportsTable = t.exportsTable;
export const folders = t.folders;
export const idempotencyKeys = t.idempotencyKeys;
export const inboxDeliveries = t.inboxDeliveries;
export const jobs = t.jobs;
export const noteChunks = t.noteChunks;
export const notes = t.notes;
export const notifyCursors = t.notifyCursors;
export const oauthClients = t.oauthClients;
export const oauthCodes = t.oauthCodes;
export const oauthTokens = t.oauthTokens;
export const sessions = t.sessions;
export const snapshots = t.snapshots;
export const tokens = t.tokens;
export const webhookAttempts = t.webhookAttempts;
export const workspaceMembers = t.workspaceMembers;
export const workspaces = t.workspaces;

/** Refuses to open a database of the other kind than the tables were chosen for. */
export function assertTablesOf(wanted: "sqlite" | "postgres"): void {
  if (wanted !== dialect) {
    throw new Error(`this process chose ${dialect}'s tables at start (NOTESTREAM_DATABASE_URL ${dialect === "postgres" ? "set" : "unset"}); it cannot open ${wanted}`);
  }
}
