import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** A person: identity and sign-in. Plans, caps and billing state live on workspaces. */
export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  email: text("email").notNull().unique(),
  passwordHash: text("password_hash"),
  name: text("name").notNull().default(""),
  bio: text("bio").notNull().default(""),
  // Sign-up in the browser: the address is confirmed by a mailed link before sign-in.
  emailConfirmedAt: integer("email_confirmed_at"),
  // The person stated a birth date 16 or more years ago, or confirmed being 16 or older.
  ageConfirmedAt: integer("age_confirmed_at"),
  // The first sign-in offered the onboarding (once; /onboarding stays reachable from the account page).
  onboardedAt: integer("onboarded_at"),
  // What the person said the account is for at onboarding; null until they choose.
  usageMode: text("usage_mode", { enum: ["browser", "code"] }),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/** Browser sessions: the cookie holds a secret, this table its SHA-256. */
export const sessions = sqliteTable(
  "sessions",
  {
    idHash: text("id_hash").primaryKey(),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    // The workspace the session works in: the personal one, or a team's.
    workspaceId: text("workspace_id").notNull(),
    csrfToken: text("csrf_token").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("sessions_account").on(t.accountId)],
);

/** One-time links sent by mail: confirm an address, reset a password, change the address, delete the account. */
export const accountLinks = sqliteTable(
  "account_links",
  {
    tokenHash: text("token_hash").primaryKey(),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    purpose: text("purpose", { enum: ["confirm", "reset", "email_change", "delete_account"] }).notNull(),
    newEmail: text("new_email"),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    usedAt: integer("used_at"),
  },
  (t) => [index("account_links_account").on(t.accountId, t.purpose)],
);

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
    // Notes outside the trash by format and streams among them, and notes in the trash: usage
    // and list totals read here, not counted. Kept by triggers on notes (migrations/0018), so
    // every way a note comes, goes or changes state counts in the statement that does it.
    plainNotes: integer("plain_notes").notNull().default(0),
    richNotes: integer("rich_notes").notNull().default(0),
    streamNotes: integer("stream_notes").notNull().default(0),
    trashedNotes: integer("trashed_notes").notNull().default(0),
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
