-- Where alerts and lines go (issue 35): channels, the line cursors of a stream's notify list, digests,
-- the alert log digests count, and a stream's notify, rules and inbox template.
CREATE TABLE `alert_log` (
	`id` integer PRIMARY KEY NOT NULL,
	`note_id` text NOT NULL,
	`at` integer NOT NULL,
	`kind` text NOT NULL,
	`text` text NOT NULL,
	FOREIGN KEY (`note_id`) REFERENCES `notes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `alert_log_note_at` ON `alert_log` (`note_id`,`at`);--> statement-breakpoint
CREATE INDEX `alert_log_at` ON `alert_log` (`at`);--> statement-breakpoint
CREATE TABLE `channels` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`kind` text NOT NULL,
	`url` text NOT NULL,
	`format` text DEFAULT 'generic' NOT NULL,
	`secret` text,
	`status` text DEFAULT 'enabled' NOT NULL,
	`failures` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`last_attempt_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `channels_workspace_name` ON `channels` (`workspace_id`,`name`);--> statement-breakpoint
CREATE INDEX `channels_workspace_created` ON `channels` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `digests` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`schedule` text NOT NULL,
	`timezone` text DEFAULT 'UTC' NOT NULL,
	`channel_id` text,
	`email` text,
	`streams` text DEFAULT '"all"' NOT NULL,
	`last_lines` integer DEFAULT 5 NOT NULL,
	`last_sent_at` integer,
	`next_run_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`channel_id`) REFERENCES `channels`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `digests_next_run` ON `digests` (`next_run_at`);--> statement-breakpoint
CREATE INDEX `digests_workspace_created` ON `digests` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `notify_cursors` (
	`note_id` text NOT NULL,
	`channel_id` text NOT NULL,
	`through_seq` integer DEFAULT 0 NOT NULL,
	`window_start` integer DEFAULT 0 NOT NULL,
	`window_sent` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`note_id`, `channel_id`),
	FOREIGN KEY (`note_id`) REFERENCES `notes`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`channel_id`) REFERENCES `channels`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `notes` ADD `notify` text;--> statement-breakpoint
ALTER TABLE `notes` ADD `rules` text;--> statement-breakpoint
ALTER TABLE `notes` ADD `inbox_template` text;