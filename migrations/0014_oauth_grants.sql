ALTER TABLE `oauth_clients` ADD `document_fetched_at` integer;--> statement-breakpoint
ALTER TABLE `oauth_codes` ADD `resource` text;--> statement-breakpoint
ALTER TABLE `oauth_tokens` ADD `last_used_at` integer;--> statement-breakpoint
ALTER TABLE `oauth_tokens` ADD `successor` text;--> statement-breakpoint
CREATE INDEX `oauth_tokens_account` ON `oauth_tokens` (`account_id`);