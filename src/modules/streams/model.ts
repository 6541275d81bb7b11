import { t } from "elysia";

export const StreamLine = t.Object({
  text: t.String({ description: "The line, without its LF" }),
  at: t.String({ format: "date-time", description: "When it was appended (lines appended together share a time)" }),
  cursor: t.String({ description: "Opaque: ?cursor= reads the lines after this one" }),
}, { $id: "#/components/schemas/Line" });
export type StreamLine = typeof StreamLine.static;

export const LinesPage = t.Object(
  {
    lines: t.Array(StreamLine, { description: "Oldest first" }),
    cursor: t.String({ description: "Continues after the last line returned; as given (or the stream's start) when none" }),
  },
  { $id: "#/components/schemas/Lines" },
);
export type LinesPage = typeof LinesPage.static;

// Documented as the integers they are but read as sent: lines.ts holds the rule (as lib/pagination
// does for lists). No schema default: Elysia would fill it in, and `limit` alone means something.
const count = (description: string) => t.Optional(t.Unsafe<string>(t.Any({ type: "integer", minimum: 1, maximum: 1000, description })));

export const LinesQuery = t.Object({
  last: count("The newest N lines: default 100; larger than 1,000 is read as 1,000. Not with cursor."),
  cursor: t.Optional(t.String({ description: "The lines after this cursor (of a line, a page or an event id), oldest first" })),
  limit: count("With cursor: at most N lines, default 100; larger than 1,000 is read as 1,000"),
});
export type LinesQuery = typeof LinesQuery.static;
