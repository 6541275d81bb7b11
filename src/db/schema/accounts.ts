import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** A person: identity and sign-in. Plans, caps and billing state live on workspaces. */
export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  email: text("email").notNull().unique(),
  passwordHash: text("password_hash"),
  name: text("name").notNull().default(""),
  bio: text("bio").notNull().default(""),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/**
 * What caps and billing apply to: every account has one personal workspace; a team workspace
 * is shared by 2 to 25 seats whose caps are counted together.
 */
export const workspaces = sqliteTable(
  "workspaces",
  {
    id: text("id").primaryKey(),
    kind: text("kind", { enum: ["personal", "team"] }).notNull(),
    name: text("name").notNull(),
    ownerId: text("owner_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    plan: text("plan").notNull(),
    state: text("state", { enum: ["active", "trial", "trial_ended", "read_only"] }).notNull().default("active"),
    trialEndsAt: integer("trial_ends_at"),
    // A workspace gets one API trial, ever.
    trialUsed: integer("trial_used", { mode: "boolean" }).notNull().default(false),
    // When a trial has ended: the day notes above the free cap go to the trash, unless a subscription starts first.
    trashDueAt: integer("trash_due_at"),
    lastPaymentAt: integer("last_payment_at"),
    lapsedAt: integer("lapsed_at"),
    billingSubscriptionId: text("billing_subscription_id"),
    // Running total of note bytes, kept in the same transaction as every write that changes it.
    storageUsed: integer("storage_used").notNull().default(0),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("workspaces_owner").on(t.ownerId, t.kind)],
);

export const workspaceMembers = sqliteTable(
  "workspace_members",
  {
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    role: text("role", { enum: ["owner", "member"] }).notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.accountId] }), index("members_account").on(t.accountId)],
);
