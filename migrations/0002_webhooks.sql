CREATE TABLE `inbox_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`note_id` text NOT NULL,
	`received_at` integer NOT NULL,
	`content_type` text,
	`headers` text NOT NULL,
	`body` blob NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`line` text,
	`delivered_at` integer,
	FOREIGN KEY (`note_id`) REFERENCES `notes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `inbox_deliveries_note` ON `inbox_deliveries` (`note_id`,`status`,`received_at`);--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` integer PRIMARY KEY NOT NULL,
	`queue` text NOT NULL,
	`payload` text NOT NULL,
	`serial_key` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`run_at` integer NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`max_attempts` integer NOT NULL,
	`lease_id` text,
	`lease_expires_at` integer,
	`last_error` text,
	`created_at` integer NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `jobs_due` ON `jobs` (`status`,`run_at`);--> statement-breakpoint
CREATE INDEX `jobs_serial` ON `jobs` (`serial_key`,`status`,`id`);--> statement-breakpoint
CREATE INDEX `jobs_finished` ON `jobs` (`finished_at`);--> statement-breakpoint
CREATE TABLE `webhook_attempts` (
	`id` integer PRIMARY KEY NOT NULL,
	`note_id` text NOT NULL,
	`delivery_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`at` integer NOT NULL,
	`url` text NOT NULL,
	`status_code` integer,
	`duration_ms` integer NOT NULL,
	`error` text,
	`response` text,
	`disabled` integer DEFAULT false NOT NULL,
	FOREIGN KEY (`note_id`) REFERENCES `notes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_attempts_note` ON `webhook_attempts` (`note_id`,`id`);--> statement-breakpoint
ALTER TABLE `notes` ADD `webhook_url` text;--> statement-breakpoint
ALTER TABLE `notes` ADD `webhook_format` text DEFAULT 'generic' NOT NULL;--> statement-breakpoint
ALTER TABLE `notes` ADD `webhook_secret` text;--> statement-breakpoint
ALTER TABLE `notes` ADD `webhook_status` text DEFAULT 'none' NOT NULL;--> statement-breakpoint
ALTER TABLE `notes` ADD `webhook_failures` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `notes` ADD `inbox_token_hash` text;--> statement-breakpoint
CREATE UNIQUE INDEX `notes_inbox_token` ON `notes` (`inbox_token_hash`);