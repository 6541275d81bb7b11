import { t } from "elysia";
import { PageQuery } from "../../http/list";
import { MAX_QUERY_CHARS, MAX_QUERY_WORDS } from "./terms";

export const SearchQuery = t.Object({
  // Optional to the router so that a missing q gets the same 400 as an empty one, from the service.
  q: t.Optional(
    t.String({
      description:
        `Required. Words to find in titles and text, all of them (AND), whole words, without regard to case or accents; ` +
        `1 to ${MAX_QUERY_CHARS} characters, at most ${MAX_QUERY_WORDS} words. Quotes, *, AND, OR, NOT and - are searched as text, not as operators`,
    }),
  ),
  folder_id: t.Optional(t.String({ description: "Only notes in this folder (fold_…)" })),
  ...PageQuery,
});

export const SnippetPart = t.Object(
  {
    text: t.String(),
    match: t.Boolean({ description: "true for a word the query matched" }),
  },
  { $id: "#/components/schemas/SnippetPart" },
);
export type SnippetPart = typeof SnippetPart.static;

export const SearchHit = t.Object(
  {
    id: t.String({ description: "note_…" }),
    kind: t.Union([t.Literal("stream"), t.Literal("editable")]),
    format: t.Union([t.Literal("plain"), t.Literal("rich")]),
    filename: t.Nullable(t.String({ description: "Stream address; null for editable notes" })),
    title: t.String(),
    folder_id: t.Nullable(t.String()),
    byte_size: t.Integer({ description: "UTF-8 bytes of the whole body" }),
    updated_at: t.String({ format: "date-time", description: "ISO 8601 UTC" }),
    snippet: t.String({
      description:
        "Up to 16 words of the best-matching text (a stream's lines, an editable note's body, or else the title), " +
        "… where it is cut, each matched word between ** and ** (Markdown bold). snippet_parts has the same text without marks",
    }),
    snippet_parts: t.Array(SnippetPart, {
      description: "The snippet split at its matches: concatenated, the texts are the snippet without marks. For rendering: escape each text, highlight where match is true",
    }),
  },
  { $id: "#/components/schemas/SearchHit" },
);
export type SearchHit = typeof SearchHit.static;

export const SearchHitList = t.Array(SearchHit);
