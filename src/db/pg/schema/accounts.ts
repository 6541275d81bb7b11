import { boolean, index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { byteCount, ms } from "./types";

// The PostgreSQL twin of src/db/schema/accounts.ts: same tables, columns and indexes, read the
// comments there. test/unit/pg-schema-parity.test.ts fails when the two drift apart.

export const accounts = pgTable("accounts", {
  id: text("id").primaryKey(),
  email: text("email").notNull().unique(),
  passwordHash: text("password_hash"),
  name: text("name").notNull().default(""),
  bio: text("bio").notNull().default(""),
  emailConfirmedAt: ms("email_confirmed_at"),
  ageConfirmedAt: ms("age_confirmed_at"),
  onboardedAt: ms("onboarded_at"),
  usageMode: text("usage_mode", { enum: ["browser", "code"] }),
  createdAt: ms("created_at").notNull(),
  updatedAt: ms("updated_at").notNull(),
});

export const sessions = pgTable(
  "sessions",
  {
    idHash: text("id_hash").primaryKey(),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    workspaceId: text("workspace_id").notNull(),
    csrfToken: text("csrf_token").notNull(),
    createdAt: ms("created_at").notNull(),
    expiresAt: ms("expires_at").notNull(),
  },
  (t) => [index("sessions_account").on(t.accountId)],
);

export const accountLinks = pgTable(
  "account_links",
  {
    tokenHash: text("token_hash").primaryKey(),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    purpose: text("purpose", { enum: ["confirm", "reset", "email_change", "delete_account"] }).notNull(),
    newEmail: text("new_email"),
    createdAt: ms("created_at").notNull(),
    expiresAt: ms("expires_at").notNull(),
    usedAt: ms("used_at"),
  },
  (t) => [index("account_links_account").on(t.accountId, t.purpose)],
);

export const workspaces = pgTable(
  "workspaces",
  {
    id: text("id").primaryKey(),
    kind: text("kind", { enum: ["personal", "team"] }).notNull(),
    name: text("name").notNull(),
    ownerId: text("owner_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    plan: text("plan").notNull(),
    state: text("state", { enum: ["active", "trial", "trial_ended", "read_only"] }).notNull().default("active"),
    trialEndsAt: ms("trial_ends_at"),
    trialUsed: boolean("trial_used").notNull().default(false),
    trashDueAt: ms("trash_due_at"),
    lastPaymentAt: ms("last_payment_at"),
    lapsedAt: ms("lapsed_at"),
    billingSubscriptionId: text("billing_subscription_id"),
    storageUsed: byteCount("storage_used").notNull().default(0),
    plainNotes: integer("plain_notes").notNull().default(0),
    richNotes: integer("rich_notes").notNull().default(0),
    streamNotes: integer("stream_notes").notNull().default(0),
    trashedNotes: integer("trashed_notes").notNull().default(0),
    createdAt: ms("created_at").notNull(),
  },
  (t) => [index("workspaces_owner").on(t.ownerId, t.kind)],
);

export const workspaceMembers = pgTable(
  "workspace_members",
  {
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    role: text("role", { enum: ["owner", "member"] }).notNull(),
    createdAt: ms("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.accountId] }), index("members_account").on(t.accountId)],
);
