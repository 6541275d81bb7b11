import { bigint, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { workspaces } from "./accounts";
import { ms } from "./types";

// The PostgreSQL twin of src/db/schema/billing.ts.

export const billingCheckouts = pgTable(
  "billing_checkouts",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    plan: text("plan").notNull(),
    createdAt: ms("created_at").notNull(),
    usedAt: ms("used_at"),
  },
  (t) => [index("billing_checkouts_workspace").on(t.workspaceId)],
);

export const billingSubscriptions = pgTable(
  "billing_subscriptions",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    customerId: text("customer_id"),
    // Lemon Squeezy's ids are up to 15 digits (config.ts): past integer's 2^31.
    variantId: bigint("variant_id", { mode: "number" }).notNull(),
    checkoutId: text("checkout_id").notNull(),
    createdAt: ms("created_at").notNull(),
  },
  (t) => [index("billing_subscriptions_workspace").on(t.workspaceId), uniqueIndex("billing_subscriptions_checkout").on(t.checkoutId)],
);
