CREATE TABLE `exports` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`account_id` text NOT NULL,
	`status` text DEFAULT 'queued' NOT NULL,
	`file_path` text,
	`size_bytes` integer,
	`notes` integer,
	`error` text,
	`created_at` integer NOT NULL,
	`completed_at` integer,
	`expires_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `exports_account` ON `exports` (`account_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `exports_expiry` ON `exports` (`status`,`expires_at`);--> statement-breakpoint
ALTER TABLE `notes` ADD `expected_interval_seconds` integer;--> statement-breakpoint
ALTER TABLE `notes` ADD `alert_email` text;--> statement-breakpoint
ALTER TABLE `notes` ADD `deadman_status` text DEFAULT 'off' NOT NULL;--> statement-breakpoint
ALTER TABLE `notes` ADD `deadman_due_at` integer;--> statement-breakpoint
CREATE INDEX `notes_deadman_due` ON `notes` (`deadman_status`,`deadman_due_at`);