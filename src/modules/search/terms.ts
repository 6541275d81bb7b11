import { AppError } from "../../http/errors";
import { charLength } from "../../lib/text";

export const MAX_QUERY_CHARS = 200;
export const MAX_QUERY_WORDS = 16;

/** What the unicode61 tokenizer keeps as a word (its default categories L*, N*, Co); the rest separates words. */
const WORD_CHAR = /[\p{L}\p{N}\p{Co}]/u;

function refused(code: string, message: string): AppError {
  return new AppError("bad_request", `q ${message}`, [{ field: "q", code, message }]);
}

/**
 * The words of what a user typed, each to be searched as text: FTS5's syntax (quotes, `*`,
 * `AND`, `NEAR`, `-`, `:`, `^`, parentheses) never reaches the parser as syntax. Words without a
 * letter or digit are dropped (the tokenizer would make an empty phrase of them, which matches
 * nothing and would sink the whole AND).
 */
export function searchWords(q: string | undefined): string[] {
  const text = (q ?? "").replace(/\p{Cc}/gu, " ").trim();
  if (text === "") throw refused("blank", "must not be empty: type a word to search for");
  if (charLength(text) > MAX_QUERY_CHARS) throw refused("too_long", `must be at most ${MAX_QUERY_CHARS} characters`);
  const seen = new Set<string>();
  const words: string[] = [];
  for (const word of text.split(/\s+/)) {
    const key = word.toLowerCase();
    if (!WORD_CHAR.test(word) || seen.has(key)) continue;
    seen.add(key);
    words.push(word);
  }
  if (words.length === 0) throw refused("no_words", "has no word to search for (letters or digits)");
  if (words.length > MAX_QUERY_WORDS) throw refused("too_many_words", `may have at most ${MAX_QUERY_WORDS} words`);
  return words;
}

/** A word as an FTS5 string: a phrase of the tokens it holds (`host-3` is "host" then "3"). */
function phrase(word: string): string {
  return `"${word.replaceAll('"', '""')}"`;
}

/** The hex of an id, as the index stores workspace ids (one token, whatever the id's characters). */
export function idToken(id: string): string {
  return Buffer.from(id, "utf8").toString("hex").toUpperCase();
}

/**
 * The FTS5 expression: every word, in the given columns, within the workspace's rows (without a
 * workspace: in every row). The workspace term comes first so FTS5 walks its postings and seeks
 * into the words'.
 */
export function matchExpression(words: readonly string[], columns: string, workspaceId?: string): string {
  const all = `${columns} : (${words.map(phrase).join(" AND ")})`;
  return workspaceId === undefined ? all : `ws : "${idToken(workspaceId)}" AND ${all}`;
}
