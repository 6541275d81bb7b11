import { CLOSE, OPEN, SNIPPET_WORDS as WORDS } from "./engine";

/*
 * FTS5's snippet() for PostgreSQL: ts_headline marks the tokens of a text that match (postgres.ts),
 * and this picks and cuts the passage exactly as FTS5 does on SQLite, so both databases answer
 * a search with the same snippet.
 */

/** What unicode61 keeps in a token (terms.ts), and combining marks, which stay with their letter. */
const TOKEN_CHAR = /[\p{L}\p{N}\p{Co}\p{M}]/u;
const NOT_TOKEN = /[^\p{L}\p{N}\p{Co}\p{M}]+/u;
/** FTS5's sentence finder: a token after `.` or `:` and white space starts a sentence. */
const SENTENCE_END = /[.:][ \t\n\r]+$/;
const fold = (token: string) => token.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();

interface Token {
  start: number;
  end: number;
  folded: string;
  /** PostgreSQL matched it to a token of the query. */
  marked: boolean;
  /** A sentence starts here: the text's first token, or one FTS5's sentence finder starts one at. */
  sentence: boolean;
}

/** A match as FTS5 counts one: a word of the query at tokens first..last (a word of several tokens, `host-3`, whole). */
interface Hit {
  first: number;
  last: number;
  word: string;
}

/**
 * The matches among the marked tokens. ts_headline marks every token equal to one of the query's,
 * and FTS5 a phrase only where all of it is: a token of a word of several tokens counts (and is
 * marked) only in a run of tokens that is the whole word.
 */
function hitsOf(tokens: Token[], words: readonly string[]): Hit[] {
  const phrases = words.map((w) => w.split(NOT_TOKEN).filter((t) => t !== "").map(fold)).filter((p) => p.length > 0);
  const singles = new Set(phrases.filter((p) => p.length === 1).map((p) => p[0]!));
  const parts = new Set(phrases.filter((p) => p.length > 1).flat());
  const hits: Hit[] = [];
  const inPhrase = new Set<number>();
  for (const p of phrases) {
    if (p.length < 2) continue;
    for (let i = 0; i + p.length <= tokens.length; i++) {
      if (!p.every((part, j) => tokens[i + j]!.marked && tokens[i + j]!.folded === part)) continue;
      hits.push({ first: i, last: i + p.length - 1, word: p.join(" ") });
      for (let j = 0; j < p.length; j++) inPhrase.add(i + j);
    }
  }
  tokens.forEach((t, i) => {
    // A token this fold does not tell apart (PostgreSQL matched it) counts as itself.
    if (t.marked && !inPhrase.has(i) && (singles.has(t.folded) || !parts.has(t.folded))) hits.push({ first: i, last: i, word: t.folded });
  });
  return hits.sort((a, b) => a.first - b.first);
}

/**
 * FTS5's snippet() over a text whose matching tokens are marked: the window of WORDS tokens with
 * the most distinct matches (1000 each, a repeat 1), centred on them, or starting at the sentence
 * one of them is in (+100, +120 at the text's start); each match marked, … where the text goes on.
 * "" when nothing matched.
 */
export function snippetOfMarked(h: string, t: string, more: boolean, words: readonly string[]): string {
  const chars = [...t];
  const marked: boolean[] = [];
  let inside = false;
  for (const ch of h) {
    if (ch === OPEN) inside = true;
    else if (ch === CLOSE) inside = false;
    else marked.push(inside);
  }
  // Not the text the marks were put on: nothing to show rather than marks in the wrong places.
  if (marked.length !== chars.length) return "";
  const tokens: Token[] = [];
  let gap = "";
  for (let i = 0; i < chars.length; ) {
    if (!TOKEN_CHAR.test(chars[i]!)) {
      gap += chars[i++];
      continue;
    }
    const start = i;
    while (i < chars.length && TOKEN_CHAR.test(chars[i]!)) i++;
    const folded = fold(chars.slice(start, i).join(""));
    tokens.push({ start, end: i, folded, marked: marked[start]!, sentence: tokens.length === 0 || SENTENCE_END.test(gap) });
    gap = "";
  }
  const hits = hitsOf(tokens, words);
  if (hits.length === 0) return "";
  const score = (from: number) => {
    const seen = new Set<string>();
    let n = 0;
    let first = -1;
    let end = -1;
    for (const hit of hits) {
      if (hit.first < from) continue;
      if (hit.first >= from + WORDS) break;
      n += seen.has(hit.word) ? 1 : 1000;
      seen.add(hit.word);
      if (first < 0) first = hit.first;
      end = hit.last + 1;
    }
    return { n, first, end };
  };
  let best = -1;
  let bestStart = 0;
  let sentence = 0;
  for (const hit of hits) {
    const s = score(hit.first);
    if (s.n > best) {
      best = s.n;
      bestStart = Math.max(0, Math.min(s.first - Math.trunc((WORDS - (s.end - s.first)) / 2), tokens.length - WORDS));
    }
    if (tokens.length > WORDS) {
      while (sentence < tokens.length - 1 && sentence < hit.first && nextSentence(tokens, sentence) <= hit.first) sentence = nextSentence(tokens, sentence);
      if (sentence < hit.first) {
        const n = score(sentence).n + (sentence === 0 ? 120 : 100);
        if (n > best) [best, bestStart] = [n, sentence];
      }
    }
  }
  const last = Math.min(bestStart + WORDS, tokens.length) - 1;
  const from = bestStart === 0 ? 0 : tokens[bestStart]!.start;
  const to = last === tokens.length - 1 ? chars.length : tokens[last]!.end;
  let out = bestStart === 0 ? "" : "…";
  let at = from;
  for (const hit of hits) {
    if (hit.first < bestStart || hit.first > last) continue;
    const start = tokens[hit.first]!.start;
    if (start < at) continue;
    const end = tokens[Math.min(hit.last, last)]!.end;
    out += `${chars.slice(at, start).join("")}${OPEN}${chars.slice(start, end).join("")}${CLOSE}`;
    at = end;
  }
  return `${out}${chars.slice(at, to).join("")}${to < chars.length || more ? "…" : ""}`;
}

/** The next token after `i` that starts a sentence (tokens.length if none). */
function nextSentence(tokens: Token[], i: number): number {
  for (let j = i + 1; j < tokens.length; j++) if (tokens[j]!.sentence) return j;
  return tokens.length;
}
