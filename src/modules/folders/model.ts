import { t } from "elysia";
import { PageQuery } from "../../http/list";
import { FOLDER_NAME_MAX_CHARS } from "../../lib/text";

export const FolderRecord = t.Object(
  {
    id: t.String({ description: "fold_…" }),
    name: t.String(),
    note_count: t.Integer(),
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  { $id: "#/components/schemas/Folder" },
);
export type FolderRecord = typeof FolderRecord.static;

export const FolderBody = t.Object({
  folder: t.Object({ name: t.String({ description: `1 to ${FOLDER_NAME_MAX_CHARS} characters, unique in the workspace regardless of case` }) }),
}, { $id: "#/components/schemas/FolderRequest" });

export const FolderIdParams = t.Object({ id: t.String() });
export const ListFoldersQuery = t.Object(PageQuery);
