CREATE TABLE `api_errors` (
	`id` integer PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`token_id` text,
	`at` integer NOT NULL,
	`method` text NOT NULL,
	`path` text NOT NULL,
	`status` integer NOT NULL,
	`code` text NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `api_errors_workspace` ON `api_errors` (`workspace_id`,`at`);--> statement-breakpoint
CREATE INDEX `api_errors_at` ON `api_errors` (`at`);--> statement-breakpoint
CREATE TABLE `billing_events` (
	`body_hash` text PRIMARY KEY NOT NULL,
	`event_name` text NOT NULL,
	`workspace_id` text,
	`received_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`workspace_id` text NOT NULL,
	`key` text NOT NULL,
	`method` text NOT NULL,
	`path` text NOT NULL,
	`body_hash` text NOT NULL,
	`status` integer NOT NULL,
	`response_body` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `key`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `idempotency_expires` ON `idempotency_keys` (`expires_at`);--> statement-breakpoint
ALTER TABLE `workspaces` ADD `trial_used` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `trash_due_at` integer;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `last_payment_at` integer;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `lapsed_at` integer;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `billing_subscription_id` text;--> statement-breakpoint
ALTER TABLE `notes` ADD `trashed_at` integer;--> statement-breakpoint
ALTER TABLE `notes` ADD `trashed_filename` text;