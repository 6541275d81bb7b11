ALTER TABLE `accounts` ADD `onboarded_at` integer;--> statement-breakpoint
ALTER TABLE `accounts` ADD `usage_mode` text;--> statement-breakpoint
-- Accounts in use before onboarding existed are not sent to it at their next sign-in; they can
-- still open it from the account page. Unconfirmed ones have not signed in yet and will see it.
UPDATE `accounts` SET `onboarded_at` = `created_at` WHERE `email_confirmed_at` IS NOT NULL;
