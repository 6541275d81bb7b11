import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { workspaces } from "./accounts";

/**
 * Checkouts the service started for a workspace. The buyer's checkout link carries only this
 * random id: the workspace a subscription pays for is read from here, never from what the buyer
 * could have typed into the link.
 */
export const billingCheckouts = sqliteTable(
  "billing_checkouts",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    plan: text("plan").notNull(),
    createdAt: integer("created_at").notNull(),
    usedAt: integer("used_at"),
  },
  (t) => [index("billing_checkouts_workspace").on(t.workspaceId)],
);

/**
 * Lemon Squeezy subscriptions bound to a workspace when they were created from one of its
 * checkouts; later events act only through this binding. The workspace's
 * billing_subscription_id names the one that currently governs it.
 */
export const billingSubscriptions = sqliteTable(
  "billing_subscriptions",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    customerId: text("customer_id"),
    variantId: integer("variant_id").notNull(),
    checkoutId: text("checkout_id").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  // One checkout pays for one subscription, also if two deliveries race.
  (t) => [index("billing_subscriptions_workspace").on(t.workspaceId), uniqueIndex("billing_subscriptions_checkout").on(t.checkoutId)],
);
