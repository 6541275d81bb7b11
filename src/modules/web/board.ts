import type { Deps } from "../../deps";
import { iso } from "../../lib/clock";
import { bodyCapFor } from "../../limits/plans";
import { html, raw, type Html } from "../../web/html";
import { bytes, when } from "../../web/layout";
import type { WebSession } from "../../web/session";
import { folderNames } from "../folders/repo";
import { heldUntil } from "../deadman/quiet";
import { alerting } from "../deadman/spell";
import type { NoteMeta } from "../notes/repo";
import {
  boardCounts,
  boardRows,
  isBoardFilter,
  streamHealth,
  webhookHealth,
  type BoardCounts,
  type BoardFilter,
  type StreamHealth,
  type WebhookHealth,
} from "../streams/board";
import { getWorkspace, tierOf } from "../workspaces/repo";
import { disabledChannelNames } from "../channels/service";
import { CHANNELS } from "./channels-view";

/**
 * The notes list as a status board: a row per note (a stream's last write, fill against its cap,
 * dead-man, webhook and inbox; an editable note's last edit and size), filters with counts, and
 * the JSON the page's script polls (src/web/assets/board.js.ts) to keep the rows current.
 *
 * Why polling and not the streams' Server-Sent Events: most of what the board shows changes
 * without an append (a deadline passing, a delivery failing, a webhook disabled, a refusal that
 * makes a stream full), and the follow wakes only on appended lines; a follow also takes one of
 * the account's ten open follows, which the stream pages need. One small query every ten seconds
 * while the page is visible costs less than either.
 */

export const BOARD_PAGE_SIZE = 25;
/** 2.5 million notes' worth of pages; a larger number is a typo or a probe. */
const MAX_PAGE = 100_000;

const FILTER_LABELS: Record<BoardFilter, string> = {
  all: "All",
  attention: "Needs attention",
  streams: "Streams",
  plain: "Plain notes",
  rich: "Rich notes",
};

const HEALTH_TEXT: Record<StreamHealth, string> = {
  off: "dead-man's switch off",
  ok: "writing on time",
  late: "late: no write within the expected interval",
  failing: "the last run reported a failure",
  paused: "paused: no alert until the next write",
  full: "full: at its size cap, new lines are refused",
};

export interface BoardView {
  folder: string | null;
  q: string;
  show: BoardFilter;
  pageNo: number;
}

/**
 * ?page= as written by our own links: digits only. Number() would also take "1e400" (Infinity,
 * an OFFSET SQLite refuses), "0x10" and "2.5"; anything but a page number shows the first page.
 */
export function pageNumber(raw: string | null): number {
  if (!raw || !/^[1-9][0-9]{0,5}$/.test(raw)) return 1;
  const n = Number(raw);
  return n <= MAX_PAGE ? n : 1;
}

/** What the list shows, from its URL; an unknown ?show= shows everything rather than nothing. */
export function boardView(url: URL): BoardView {
  const show = url.searchParams.get("show");
  return {
    folder: url.searchParams.get("folder") || null,
    q: url.searchParams.get("q")?.trim() ?? "",
    show: isBoardFilter(show) ? show : "all",
    pageNo: pageNumber(url.searchParams.get("page")),
  };
}

/** The list's URL (or its JSON's) for a view; the filter is in it so it can be bookmarked. */
export function boardLink(path: string, v: BoardView, change: Partial<BoardView> = {}): string {
  const w = { ...v, ...change };
  const params = new URLSearchParams();
  if (w.folder) params.set("folder", w.folder);
  if (w.q) params.set("q", w.q);
  if (w.show !== "all") params.set("show", w.show);
  if (w.pageNo > 1) params.set("page", String(w.pageNo));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

/** The cap a stream fills: the workspace's per-note size for plain text (null: none). */
async function streamCap(deps: Deps, s: WebSession): Promise<number | null> {
  return bodyCapFor(tierOf(deps, await getWorkspace(deps, s.workspaceId)), "plain");
}

/** "3 MB" rather than bytes()'s "3.0 MB": the meter's text reads as a sentence. */
function size(n: number): string {
  return bytes(n).replace(/\.0 /, " ");
}

function interval(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} d`;
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

function cell(label: string, value: Html | string, cls = ""): Html {
  return html`<span class="b-cell ${cls}"><span class="b-label">${label}</span> ${value}</span>`;
}

function fill(n: NoteMeta, name: string, cap: number | null): Html {
  if (cap === null) return html`<span class="b-size">${size(n.byteSize)}</span>`;
  const pct = Math.min(100, Math.floor((n.byteSize / cap) * 100));
  return html`<meter class="fill" min="0" max="${cap}" low="${Math.round(cap * 0.8)}" high="${Math.round(cap * 0.95)}" optimum="0" value="${Math.min(n.byteSize, cap)}" aria-label="${name}: ${pct}% of its size cap"></meter><span class="b-size">${size(n.byteSize)} of ${size(cap)}</span>`;
}

function deadmanBadge(n: NoteMeta, health: StreamHealth): Html {
  const every = n.expectedIntervalSeconds ? `; expected every ${interval(n.expectedIntervalSeconds)}` : "";
  return html`<span class="badge ${health}" title="${HEALTH_TEXT[health]}${every}" data-health="${health}">${health}</span>`;
}

function webhookBadge(n: NoteMeta, w: WebhookHealth): Html {
  const title =
    w === "failing"
      ? `the last ${n.webhookFailures === 1 ? "delivery" : `${n.webhookFailures} deliveries`} failed; retrying`
      : w === "disabled"
        ? "turned off after failed deliveries; saving the stream's settings turns it on again"
        : w === "ok"
          ? "delivering"
          : "no webhook";
  return html`<span class="badge ${w === "ok" ? "ok" : w}" title="${title}" data-webhook="${w}">${w}</span>`;
}

/** Beside the dead-man badge: alerts held back now by quiet time or a maintenance window, until when. */
function quietBadge(n: NoteMeta, now: number): Html | "" {
  if (n.deadmanStatus === "off" || n.deadmanStatus === "paused") return "";
  const until = heldUntil(n, now);
  if (until === null) return "";
  const what = n.quietUntil !== null && Number(n.quietUntil) > now ? "quiet" : "in a maintenance window";
  return html`<span class="badge quiet" title="${what} until ${iso(until).replace("T", " ").slice(0, 16)} UTC: no alert goes out before then" data-quiet-until="${iso(until)}">quiet</span>`;
}

/** Beside a late or failing badge: someone acknowledged the alert, so no reminders or escalation follow. */
function ackBadge(n: NoteMeta): Html | "" {
  if (!alerting(n.deadmanStatus) || n.acknowledgedAt === null) return "";
  const at = iso(Number(n.acknowledgedAt));
  return html`<span class="badge acknowledged" title="acknowledged ${at.replace("T", " ").slice(0, 16)} UTC: no reminders or escalation follow" data-acknowledged="${at}">acknowledged</span>`;
}

function rowInner(n: NoteMeta, cap: number | null, now: number): Html {
  const name = n.filename ?? n.title;
  if (n.kind !== "stream") {
    return html`<a class="b-title" href="/notes/${n.id}"><strong>${n.title}</strong><span class="meta">${n.format === "rich" ? "rich note" : "plain note"}</span></a>${cell("Last edit", when(iso(n.updatedAt)), "b-when")}${cell("Size", html`<span class="b-size">${size(n.byteSize)}</span>`, "b-fill")}`;
  }
  const health = streamHealth(n, cap);
  return html`<a class="b-title" href="/notes/${n.id}"><strong>${n.title}</strong>${n.filename && n.filename !== n.title ? html`<span class="meta">${n.filename}</span>` : ""}</a>${cell("Last write", when(iso(n.lastWriteAt)), "b-when")}${cell("Size", fill(n, name, cap), "b-fill")}${cell("Dead-man", html`${deadmanBadge(n, health)}${ackBadge(n)}${quietBadge(n, now)}`)}${cell("Webhook", webhookBadge(n, webhookHealth(n)))}${cell("Inbox", html`<span class="badge ${n.inboxTokenHash ? "on" : "off"}" data-inbox="${n.inboxTokenHash ? "on" : "off"}">${n.inboxTokenHash ? "on" : "off"}</span>`)}`;
}

/** A row and its signature: the script replaces a row only when what it shows changed, so focus and selection elsewhere stay. */
function boardRow(n: NoteMeta, cap: number | null, now: number): { id: string; sig: string; html: string } {
  const inner = rowInner(n, cap, now).value;
  const sig = Bun.hash(inner).toString(36);
  const kind = n.kind === "stream" ? "stream" : "note";
  // `inner` was built by html``: its parts are escaped already.
  return { id: n.id, sig, html: html`<li class="brow ${kind}" data-board-row="${n.id}" data-sig="${sig}">${raw(inner)}</li>`.value };
}

function emptyText(v: BoardView): Html | string {
  if (v.q) return "No note has that in its title.";
  switch (v.show) {
    case "attention":
      return "Nothing needs attention: no stream is late, failing or full, and every webhook delivers.";
    case "streams":
      return html`No streams here yet. Append to one over the API: <code>POST /api/v1/notes/by-filename/&lt;name&gt;/append</code>.`;
    case "plain":
      return "No plain notes here.";
    case "rich":
      return "No rich notes here.";
    case "all":
      return html`No notes here yet. Create one, or append to a stream over the API: <code>POST /api/v1/notes/by-filename/&lt;name&gt;/append</code>.`;
  }
}

/** Above the board: channels turned off after failed deliveries, which no stream reaches until someone re-enables them. */
async function disabledChannelsNotice(s: WebSession): Promise<Html | ""> {
  const names = await disabledChannelNames(s.ctx.deps, s.workspaceId);
  if (names.length === 0) return "";
  const which = names.length === 1 ? html`The channel <strong>${names[0]!}</strong> is` : html`The channels ${names.map((n, i) => html`${i ? ", " : ""}<strong>${n}</strong>`)} are`;
  return html`<div class="flash error" role="status" data-disabled-channels>${which} turned off after failed deliveries: alerts and lines do not reach ${names.length === 1 ? "it" : "them"}. <a href="${CHANNELS}">Fix and re-enable on the Channels page</a>.</div>`;
}

interface BoardData {
  rows: { id: string; sig: string; html: string }[];
  counts: BoardCounts;
  total: number;
}

/** The notice's place above the board, drawn with the page and redrawn by each poll (a channel can turn off or back on while the page is open). */
const noticeSlot = (notice: Html | "") => html`<div data-board-notice>${notice}</div>`;

async function boardData(deps: Deps, s: WebSession, v: BoardView): Promise<BoardData> {
  const cap = await streamCap(deps, s);
  const scope = { folderId: v.folder ?? undefined, titleContains: v.q };
  const { rows, total } = await boardRows(s.ctx, { ...scope, show: v.show }, cap, { limit: BOARD_PAGE_SIZE, offset: (v.pageNo - 1) * BOARD_PAGE_SIZE });
  return { rows: rows.map((n) => boardRow(n, cap, deps.clock.now())), counts: await boardCounts(s.ctx, scope, cap), total };
}

/** GET /notes/board.json: the rows the list's view shows now, with the filters' counts, for the page's script. */
export async function boardJson(deps: Deps, s: WebSession, url: URL): Promise<Response> {
  const { rows, counts } = await boardData(deps, s, boardView(url));
  const notice = await disabledChannelsNotice(s);
  return Response.json({ rows, counts, notice: notice === "" ? "" : notice.value }, { headers: { "cache-control": "no-store" } });
}

/** The h1, the filters and the rows, for the notes list page (which keeps the search and new-note forms). */
export async function board(deps: Deps, s: WebSession, v: BoardView): Promise<{ heading: Html; filters: Html; list: Html; pager: Html | "" }> {
  const { rows, counts, total } = await boardData(deps, s, v);
  const folderName = v.folder ? (await folderNames(deps, s.workspaceId)).find((f) => f.id === v.folder)?.name : undefined;

  const pages = Math.max(1, Math.ceil(total / BOARD_PAGE_SIZE));
  const filters = html`<nav class="filters" aria-label="Show">${(Object.keys(FILTER_LABELS) as BoardFilter[]).map((f) => {
    const on = f === v.show;
    return html`<a href="${boardLink("/notes", v, { show: f, pageNo: 1 })}" class="${on ? "on" : ""}" ${on ? html`aria-current="page"` : ""}>${FILTER_LABELS[f]} <span class="count ${f === "attention" && counts.attention > 0 ? "alert" : ""}" data-board-count="${f}">${counts[f]}</span></a>`;
  })}</nav>`;
  const list =
    rows.length === 0
      ? html`<p class="muted">${emptyText(v)}</p>`
      : html`<ul class="notes board">${rows.map((r) => raw(r.html))}</ul>`;
  return {
    heading: html`<h1>${folderName ?? "Notes"}</h1>${noticeSlot(await disabledChannelsNotice(s))}`,
    filters,
    list: html`<div class="card" data-board="${boardLink("/notes/board.json", v)}">${list}<p class="small muted mt8" data-board-changed hidden role="status">Notes were added to or left this view. <a href="${boardLink("/notes", v)}">Refresh the list</a></p></div>`,
    pager:
      pages > 1
        ? html`<nav class="pager" aria-label="Pages">${v.pageNo > 1 ? html`<a href="${boardLink("/notes", v, { pageNo: v.pageNo - 1 })}">← Newer</a>` : ""}<span class="muted">Page ${v.pageNo} of ${pages} · ${total} notes</span>${v.pageNo < pages ? html`<a href="${boardLink("/notes", v, { pageNo: v.pageNo + 1 })}">Older →</a>` : ""}</nav>`
        : "",
  };
}
