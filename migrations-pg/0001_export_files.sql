CREATE TABLE "export_files" (
	"export_id" text NOT NULL,
	"part" integer NOT NULL,
	"data" "bytea" NOT NULL,
	CONSTRAINT "export_files_export_id_part_pk" PRIMARY KEY("export_id","part")
);
--> statement-breakpoint
ALTER TABLE "export_files" ADD CONSTRAINT "export_files_export_id_exports_id_fk" FOREIGN KEY ("export_id") REFERENCES "public"."exports"("id") ON DELETE cascade ON UPDATE no action;