import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { iso } from "../../lib/clock";
import { pageFrom } from "../../lib/pagination";
import { publicOrigin } from "../../http/origin";
import { html, page, type Html } from "../../web/html";
import { back, bytes, csrfField, flashFrom, layout, redirect, secretBox, when } from "../../web/layout";
import { pageMacros, type RefusalPage } from "../../web/macros";
import type { WebSession } from "../../web/session";
import { disableInbox, listInboxDeliveries, replayDelivery, rotateInbox } from "../inbox/service";
import { visibleNote, type NoteRow } from "../notes/repo";
import { MAX_RETENTION_DAYS } from "../streams/retention";
import { updateNote } from "../notes/service";
import { WEBHOOK_FORMATS, type WebhookFormat } from "../webhooks/formats";
import { listWebhookAttempts } from "../webhooks/service";
import { bodyCapFor } from "../../limits/plans";
import { getWorkspace, tierOf } from "../workspaces/repo";
import { firstValue, formFields } from "./form";
import { fullBadge } from "./note-parts";

function streamSettingsPage(s: WebSession, noteId: string, url: URL, shown?: Html): Response {
  const note = visibleNote(s.ctx, noteId);
  if (note.kind !== "stream") return redirect(`/notes/${note.id}`);
  const attempts = listWebhookAttempts({ ctx: s.ctx, noteId: note.id, page: pageFrom({ limit: 10 }) }).items;
  const dead = listInboxDeliveries({ ctx: s.ctx, noteId: note.id, status: "dead", page: pageFrom({ limit: 20 }) }).items;
  const recent = listInboxDeliveries({ ctx: s.ctx, noteId: note.id, page: pageFrom({ limit: 5 }) }).items;
  const interval = note.expectedIntervalSeconds;
  return page(
    layout({
      title: `${note.title}: settings`,
      session: s,
      active: "notes",
      flash: flashFrom(url),
      body: html`<p><a href="/notes/${note.id}">← ${note.title}</a></p><h1>Webhook, inbox and alerts</h1>${shown ?? ""}
<div class="card"><h2>Outbound webhook ${note.webhookStatus === "enabled" ? html`<span class="badge ok">on</span>` : note.webhookStatus === "disabled" ? html`<span class="badge disabled">disabled</span>` : ""}</h2>
  ${note.webhookStatus === "disabled" ? html`<div class="flash error">Deliveries kept failing, so the webhook was turned off. Fix the receiver, then save here to turn it back on.</div>` : ""}
  <p class="small">Every append is POSTed to this URL, signed with <code>X-Service-Signature</code> and Standard Webhooks headers.</p>
  <form method="post" action="/notes/${note.id}/webhook">${csrfField(s)}
    <label><span>URL</span><input type="url" name="webhook_url" value="${note.webhookUrl ?? ""}" placeholder="https://hooks.example.com/…"></label>
    <label><span>Format</span><select name="webhook_format">${WEBHOOK_FORMATS.map((f) => html`<option value="${f}" ${f === note.webhookFormat ? "selected" : ""}>${f}</option>`)}</select></label>
    <div class="row"><button class="primary">Save webhook</button>${note.webhookUrl ? html`<button name="remove" value="yes" class="danger">Remove</button>` : ""}</div>
  </form>
  ${note.webhookSecret ? html`<p class="small">Signing secret: <code>${note.webhookSecret}</code></p>` : ""}
  ${
    attempts.length
      ? html`<h3 class="small muted">Recent deliveries</h3><table><tr><th>When</th><th>Attempt</th><th>Status</th><th>Time</th><th>Error</th></tr>${attempts.map(
          (a) => html`<tr><td>${when(a.at)}</td><td>${a.attempt}</td><td>${a.status_code ?? "—"}</td><td>${a.duration_ms} ms</td><td class="small">${a.error ?? ""}</td></tr>`,
        )}</table>`
      : ""
  }
</div>
<div class="card"><h2>Inbox ${note.inboxTokenHash ? html`<span class="badge ok">on</span>` : ""}</h2>
  <p class="small">Third parties (GitHub, Stripe, Alertmanager, …) POST to the inbox URL; each payload becomes one line here.</p>
  <div class="row"><form method="post" action="/notes/${note.id}/inbox/rotate">${csrfField(s)}<button class="primary">${note.inboxTokenHash ? "Rotate the inbox URL" : "Create an inbox URL"}</button></form>
  ${note.inboxTokenHash ? html`<form method="post" action="/notes/${note.id}/inbox/disable">${csrfField(s)}<button class="danger">Turn the inbox off</button></form>` : ""}</div>
  ${note.inboxTokenHash ? html`<p class="muted small">The URL is shown once, when it is made; rotating makes a new one and the old one stops working at once.</p>` : ""}
  ${
    recent.length
      ? html`<h3 class="small muted">Recent payloads</h3><table><tr><th>Received</th><th>Status</th><th>Line</th></tr>${recent.map((d) => html`<tr><td>${when(d.received_at)}</td><td>${d.status}</td><td class="small mono">${d.line ?? d.last_error ?? ""}</td></tr>`)}</table>`
      : ""
  }
  <h3 class="small muted">Dead letters</h3>${
    dead.length
      ? html`<table><tr><th>Received</th><th>Why</th><th></th></tr>${dead.map(
          (d) => html`<tr><td>${when(d.received_at)}</td><td class="small">${d.last_error ?? ""}</td><td><form method="post" action="/notes/${note.id}/inbox/${d.id}/replay">${csrfField(s)}<button>Replay</button></form></td></tr>`,
        )}</table>`
      : html`<p class="muted small">None: every payload reached the note.</p>`
  }
</div>
${retentionCard(s, note)}
<div class="card"><h2>Alert when it goes quiet ${note.deadmanStatus === "late" ? html`<span class="badge late">late</span>` : note.deadmanStatus === "ok" ? html`<span class="badge ok">watching</span>` : ""}</h2>
  <p class="small">If no line arrives within the interval, we mail once; and once more when lines come back. Last write: ${when(iso(note.lastWriteAt))}.</p>
  <form method="post" action="/notes/${note.id}/deadman">${csrfField(s)}
    <div class="row"><label class="grow"><span>Expect a write at least every</span><input type="number" name="every" min="1" value="${interval ? (interval % 3600 === 0 ? interval / 3600 : Math.round(interval / 60)) : ""}"></label>
    <label><span>Unit</span><select name="unit"><option value="hours" ${interval && interval % 3600 === 0 ? "selected" : ""}>hours</option><option value="minutes" ${interval && interval % 3600 !== 0 ? "selected" : ""}>minutes</option></select></label></div>
    <label><span>Send alerts to (empty: your account address)</span><input type="email" name="alert_email" value="${note.alertEmail ?? ""}"></label>
    <div class="row"><button class="primary">Save</button>${interval ? html`<button name="off" value="yes">Turn off</button>` : ""}</div>
  </form>
</div>`,
    }),
  );
}


/** What happens at the size cap (refuse, or drop the oldest lines) and removal by age. */
function retentionCard(s: WebSession, note: NoteRow): Html {
  const cap = bodyCapFor(tierOf(s.ctx.deps, getWorkspace(s.ctx.deps, note.workspaceId)), "plain");
  return html`<div class="card"><h2>When it is full ${fullBadge(note)}</h2>
  ${note.fullSince !== null ? html`<div class="flash error">New lines are being refused since ${when(iso(note.fullSince))}: the stream is at its size cap. Drop the oldest lines, or free space, to take lines again.</div>` : ""}
  <p class="small">A stream holds up to ${cap === null ? "any size" : bytes(cap)}. At that size it can refuse new lines (and mail you once), or drop its oldest lines to make room. Lines can also go once they are older than a number of days.</p>
  <form method="post" action="/notes/${note.id}/retention">${csrfField(s)}
    <div class="row"><label class="grow"><span>At the size cap</span><select name="retention"><option value="reject" ${note.retention === "reject" ? "selected" : ""}>refuse new lines</option><option value="drop_oldest" ${note.retention === "drop_oldest" ? "selected" : ""}>drop the oldest lines</option></select></label>
    <label><span>Remove lines older than (days; empty keeps them)</span><input type="number" name="retention_days" min="1" max="${MAX_RETENTION_DAYS}" value="${note.retentionDays ?? ""}"></label></div>
    <div class="row"><button class="primary">Save</button></div>
  </form>
</div>`;
}

/** Any refusal while showing the page (above all, a note this account cannot see) is its 404. */
const settingsRefused: RefusalPage = (_, { s }) =>
  page(layout({ title: "Not found", session: s, body: html`<div class="card"><h1>Not found</h1><p><a href="/notes">Back to your notes</a></p></div>` }), 404);

/** A stream's settings page (outbound webhook, inbox, quiet alert) and its forms. */
export const streamSettingsPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .get("/notes/:id/settings", ({ s, params, request }) => streamSettingsPage(s, params.id, new URL(request.url)), {
      session: "page",
      refused: settingsRefused,
    })
    .post(
      "/notes/:id/webhook",
      async ({ s, params, body }) => {
        const b = formFields(body);
        const remove = firstValue(b.remove) === "yes";
        const url = firstValue(b.webhook_url).trim();
        await updateNote({
          ctx: s.ctx,
          id: params.id,
          input: { webhook_url: remove || !url ? null : url, webhook_format: (firstValue(b.webhook_format) || "generic") as WebhookFormat },
        });
        return back(`/notes/${params.id}/settings`, "ok", remove || !url ? "Webhook removed." : "Webhook saved: the next append is delivered.");
      },
      { session: "form", refused: "/notes/:id/settings" },
    )
    .post(
      "/notes/:id/deadman",
      async ({ s, params, body }) => {
        const b = formFields(body);
        const off = firstValue(b.off) === "yes" || !firstValue(b.every);
        const seconds = Math.round(Number(firstValue(b.every)) * (firstValue(b.unit) === "minutes" ? 60 : 3600));
        await updateNote({
          ctx: s.ctx,
          id: params.id,
          input: { expected_interval_seconds: off ? null : seconds, alert_email: off ? undefined : firstValue(b.alert_email).trim() || null },
        });
        return back(`/notes/${params.id}/settings`, "ok", off ? "Alerts turned off." : "Saved: we'll mail if it goes quiet.");
      },
      { session: "form", refused: "/notes/:id/settings" },
    )
    .post(
      "/notes/:id/retention",
      async ({ s, params, body }) => {
        const b = formFields(body);
        const days = firstValue(b.retention_days).trim();
        await updateNote({
          ctx: s.ctx,
          id: params.id,
          // The service checks both, as for the API: an unknown choice or a bad number comes back as its message.
          input: { retention: firstValue(b.retention) as "reject" | "drop_oldest", retention_days: days === "" ? null : Number(days) },
        });
        return back(`/notes/${params.id}/settings`, "ok", "Retention saved.");
      },
      { session: "form", refused: "/notes/:id/settings" },
    )
    .post(
      "/notes/:id/inbox/rotate",
      async ({ s, params, request }) => {
        const r = await rotateInbox({ ctx: s.ctx, noteId: params.id, baseUrl: publicOrigin(deps, request) });
        const shown = secretBox("inbox-url", r.body.inbox_url, "Give this URL to the sender. It is shown only this once; anyone with it can add lines.");
        return streamSettingsPage(s, params.id, new URL(request.url), shown);
      },
      { session: "form", refused: "/notes/:id/settings" },
    )
    .post(
      "/notes/:id/inbox/disable",
      async ({ s, params }) => {
        await disableInbox({ ctx: s.ctx, noteId: params.id });
        return back(`/notes/${params.id}/settings`, "ok", "Inbox turned off: its URL answers 404 now.");
      },
      { session: "form", refused: "/notes/:id/settings" },
    )
    .post(
      "/notes/:id/inbox/:did/replay",
      async ({ s, params }) => {
        await replayDelivery({ ctx: s.ctx, noteId: params.id, deliveryId: params.did });
        return back(`/notes/${params.id}/settings`, "ok", "Queued again: it will be added to the note in a moment.");
      },
      { session: "form", refused: "/notes/:id/settings" },
    );
