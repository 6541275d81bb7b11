import { Elysia } from "elysia";
import { and, desc, eq } from "drizzle-orm";
import type { Deps } from "../../deps";
import { exportsTable, notes, tokens } from "../../db/schema";
import { AppError, ValidationFailed } from "../../http/errors";
import { iso } from "../../lib/clock";
import { pageFrom } from "../../lib/pagination";
import { startTrial } from "../accounts/lifecycle";
import { describeAccount, normaliseEmail } from "../accounts/service";
import { checkCurrentPassword, confirmEmailChange, requestEmailChange, updateProfile } from "../accounts/web-auth";
import { listApiErrors } from "../errors/service";
import { exportFile, requestExport } from "../export/service";
import { disableInbox, listInboxDeliveries, replayDelivery, rotateInbox } from "../inbox/service";
import { updateNote } from "../notes/service";
import { visibleNote } from "../notes/repo";
import { MAX_EXPIRY_DAYS, mintExtensionToken, mintToken, revokeAccountTokens, revokeToken, SCOPES } from "../tokens/service";
import { revokeAccountGrants } from "../../mcp/oauth/tokens";
import { WEBHOOK_FORMATS, type WebhookFormat } from "../webhooks/formats";
import { listWebhookAttempts } from "../webhooks/service";
import { getWorkspace } from "../workspaces/repo";
import { errorMessage, formAction, limit, requireSession } from "./guard";
import { html, page, type Html } from "./html";
import { back, bytes, csrfField, flashFrom, layout, redirect, when } from "./layout";
import { sessionIdHash, type WebSession } from "./session";
import type { Scope } from "../../deps";

const str = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? "";


function origin(deps: Deps, request: Request): string {
  return deps.config.baseUrl ?? new URL(request.url).origin;
}

function meter(used: number, cap: number | null, label: string, format = (n: number) => String(n)): Html {
  const pct = cap ? Math.min(100, Math.round((used / cap) * 100)) : 0;
  return html`<div class="mb10"><div class="row spread small"><span>${label}</span><span class="muted">${format(used)} of ${cap === null ? "unlimited" : format(cap)}</span></div>${
    cap === null ? "" : html`<progress class="meter" value="${Math.min(used, cap)}" max="${cap}" aria-label="${label}">${pct}%</progress>`
  }</div>`;
}

function secretBox(id: string, value: string, note: string): Html {
  return html`<div class="card"><h2>Copy it now</h2><p class="small">${note}</p><div class="secret"><input type="text" id="${id}" value="${value}" readonly><button type="button" data-copy="${id}">Copy</button></div></div>`;
}

function noteOptions(deps: Deps, s: WebSession, streamsOnly: boolean): Html {
  const rows = deps.db
    .select({ id: notes.id, title: notes.title, filename: notes.filename, kind: notes.kind })
    .from(notes)
    .where(eq(notes.workspaceId, s.workspaceId))
    .orderBy(desc(notes.updatedAt))
    .limit(200)
    .all()
    .filter((n) => !streamsOnly || n.kind === "stream");
  return html`${rows.map((n) => html`<option value="${n.id}">${n.filename ?? n.title}</option>`)}`;
}

function tokensPage(deps: Deps, s: WebSession, url: URL, shown?: Html): Response {
  const rows = deps.db.select().from(tokens).where(eq(tokens.workspaceId, s.workspaceId)).orderBy(desc(tokens.createdAt)).all();
  const now = deps.clock.now();
  const ws = getWorkspace(deps, s.workspaceId);
  const account = describeAccount({ ctx: s.ctx });
  const subscriber = ws.plan !== "free" && ws.state === "active";
  return page(
    layout({
      title: "API tokens",
      session: s,
      active: "tokens",
      flash: flashFrom(url),
      body: html`<h1>API tokens</h1>${shown ?? ""}
<div class="card"><h2>New token</h2>${
        account.api_access
          ? html`<form method="post" action="/settings/tokens">${csrfField(s)}
  <label><span>Name</span><input type="text" name="name" maxlength="80" placeholder="e.g. deploy pipeline"></label>
  <div class="row mb12">${SCOPES.map((sc) => html`<label class="check"><input type="checkbox" name="scope" value="${sc}" ${sc === "append" ? "checked" : ""}> ${sc}</label>`)}</div>
  <p class="muted small">read: list and read notes · write: create, edit, delete, move and append · append: append only</p>
  <label><span>Only this note (optional)</span><select name="note_id"><option value="">Every note</option>${noteOptions(deps, s, false)}</select></label>
  <label><span>Expires in (days, at most ${MAX_EXPIRY_DAYS})</span><input type="number" name="expires_in_days" min="1" max="${MAX_EXPIRY_DAYS}" value="90"></label>
  <button class="primary">Create token</button></form>`
          : html`<p>The ${account.plan} plan has no API access. Start the API trial on the <a href="/settings">account page</a>, or move to Dev or Team.</p>`
      }</div>
<div class="card"><h2>Your tokens</h2>${
        rows.length === 0
          ? html`<p class="muted">None yet.</p>`
          : html`<table><tr><th>Name</th><th>Scopes</th><th>Note</th><th>Last used</th><th>Expires</th><th></th></tr>${rows.map((t) => {
              const state = t.revokedAt !== null ? "revoked" : t.expiresAt <= now ? "expired" : "active";
              return html`<tr><td>${t.name || html`<span class="muted">unnamed</span>`}${t.kind === "extension" ? html`<span class="badge">extension</span>` : ""}<div class="muted small mono">${t.id}</div></td><td>${t.scopes}</td><td class="small">${t.noteId ?? "all"}</td><td>${when(t.lastUsedAt === null ? null : iso(t.lastUsedAt))}</td><td>${when(iso(t.expiresAt))}</td><td>${
                state === "active"
                  ? html`<form method="post" action="/settings/tokens/${t.id}/revoke">${csrfField(s)}<button class="danger">Revoke</button></form>`
                  : html`<span class="badge">${state}</span>`
              }</td></tr>`;
            })}</table>`
      }</div>
<div class="card"><h2>Browser-extension token</h2>${
        subscriber
          ? html`<p class="small">One append-only token for the browser extension, bound to one stream (60 appends a minute, outside the token cap). A new one replaces the old.</p>
  <form method="post" action="/settings/extension-token" class="row">${csrfField(s)}<select name="note_id" required>${noteOptions(deps, s, true)}</select><button>Create extension token</button></form>`
          : html`<p class="muted small">For subscribers: available on paid plans.</p>`
      }</div>`,
    }),
  );
}

function accountPage(deps: Deps, s: WebSession, url: URL): Response {
  const a = describeAccount({ ctx: s.ctx });
  const ws = getWorkspace(deps, s.workspaceId);
  const errors = listApiErrors({ ctx: s.ctx, page: pageFrom({ limit: 20 }) }).items;
  const exportsList = deps.db.select().from(exportsTable).where(eq(exportsTable.workspaceId, s.workspaceId)).orderBy(desc(exportsTable.createdAt)).limit(5).all();
  const now = deps.clock.now();
  const canTrial = !ws.trialUsed && ws.state === "active" && !a.api_access;
  const stateText: Record<string, string> = {
    active: ws.plan === "free" ? "free" : "subscribed",
    trial: `API trial until ${a.trial_ends_at?.slice(0, 10)}`,
    trial_ended: "trial ended: the trial's tokens can still read",
    read_only: "read-only: notes can be read and exported, not changed",
  };
  return page(
    layout({
      title: "Account",
      session: s,
      active: "settings",
      flash: flashFrom(url),
      body: html`<h1>Account</h1>
<div class="card"><h2>Plan</h2><p><strong>${a.plan}</strong> · ${stateText[a.state] ?? a.state}</p>
  ${meter(a.usage.notes, a.caps.notes ?? (a.caps.plain_notes === null ? null : a.caps.plain_notes + (a.caps.rich_notes ?? 0)), "Notes")}
  ${meter(a.usage.storage_bytes, a.caps.storage_bytes, "Storage", bytes)}
  ${meter(a.usage.folders, a.caps.folders, "Folders")}
  ${meter(a.usage.active_tokens, a.caps.active_tokens, "API tokens")}
  ${canTrial ? html`<form method="post" action="/settings/trial">${csrfField(s)}<button class="primary">Start the 14-day API trial</button> <span class="muted small">100 notes, 300 MB, the REST API. Once per account.</span></form>` : ""}
</div>
<div class="card"><h2>Export everything</h2><p class="small">A zip of every note, in folders, with a manifest. We mail you a link that works for 24 hours. Two an hour.</p>
  <form method="post" action="/settings/export">${csrfField(s)}<button>Request an export</button></form>
  ${
    exportsList.length
      ? html`<table class="mt10"><tr><th>Requested</th><th>Status</th><th></th></tr>${exportsList.map((e) => {
          const live = e.status === "ready" && (e.expiresAt ?? 0) > now;
          return html`<tr><td>${when(iso(e.createdAt))}</td><td>${live ? "ready" : e.status === "ready" ? "expired" : e.status}</td><td>${live ? html`<a href="/exports/${e.id}/download">Download (${bytes(e.sizeBytes)})</a>` : ""}</td></tr>`;
        })}</table>`
      : ""
  }
</div>
<div class="card"><h2>Profile</h2><form method="post" action="/settings/profile">${csrfField(s)}
  <label><span>Name</span><input type="text" name="name" maxlength="80" value="${s.account.name}"></label>
  <label><span>Bio</span><textarea name="bio" maxlength="500" class="bio">${s.account.bio}</textarea></label>
  <button>Save profile</button></form></div>
<div class="card"><h2>E-mail address</h2><p class="small">Now <strong>${s.account.email}</strong>. We send a link to the new address to confirm it; confirming signs your other browsers out.</p>
  <form method="post" action="/settings/email" class="row">${csrfField(s)}<input type="email" name="email" required placeholder="new@example.com" aria-label="New e-mail address"><input type="password" name="password" required autocomplete="current-password" placeholder="Current password" aria-label="Current password"><button>Change address</button></form></div>
<div class="card"><h2>API tokens and AI clients</h2><p class="small">If someone else may have had your password, <a href="/settings/access">end every API token and AI-client grant at once</a>.</p></div>
<div class="card"><h2>API errors</h2>${
        errors.length
          ? html`<table><tr><th>When</th><th>Request</th><th>Status</th><th>Code</th></tr>${errors.map((e) => html`<tr><td>${when(e.at)}</td><td class="mono">${e.method} ${e.path}</td><td>${e.status}</td><td>${e.code}</td></tr>`)}</table>`
          : html`<p class="muted small">No errors: every API request of this account succeeded.</p>`
      }</div>`,
    }),
  );
}

function accessPage(s: WebSession, url: URL): Response {
  return page(
    layout({
      title: "API tokens and AI clients",
      session: s,
      active: "settings",
      flash: flashFrom(url),
      body: html`<h1>API tokens and AI clients</h1>
<div class="card"><h2>End them all</h2>
  <p class="small">A new password signs other browsers out, but API tokens, the browser-extension token and the access you gave AI clients (MCP) keep working. If someone else may have had your password, end them all: scripts and clients then need new ones.</p>
  <form method="post" action="/settings/access/revoke">${csrfField(s)}<button class="danger">Revoke every API token and AI-client grant</button></form>
  <p class="muted small">To end one token only, use the <a href="/settings/tokens">API tokens</a> page.</p></div>`,
    }),
  );
}

const counted = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

function streamSettingsPage(deps: Deps, s: WebSession, noteId: string, url: URL, shown?: Html): Response {
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


export const settingsPages = (deps: Deps) =>
  new Elysia()
    .get("/settings", ({ request }) => {
      const s = requireSession(deps, request);
      return s instanceof Response ? s : accountPage(deps, s, new URL(request.url));
    })
    .get("/settings/tokens", ({ request }) => {
      const s = requireSession(deps, request);
      return s instanceof Response ? s : tokensPage(deps, s, new URL(request.url));
    })
    .post("/settings/tokens", ({ request, body }) =>
      formAction(deps, request, body, async (s, b) => {
        const scopes = ([] as string[]).concat(b.scope ?? []).filter((x): x is Scope => (SCOPES as string[]).includes(x));
        if (scopes.length === 0) throw ValidationFailed.field("scope", "required", "Choose at least one scope.");
        const days = Number(str(b.expires_in_days) || 90);
        const minted = await deps.writer.write(() =>
          mintToken(deps, { accountId: s.account.id, workspaceId: s.workspaceId, scopes, noteId: str(b.note_id) || null, expiresInDays: days, name: str(b.name).slice(0, 80) }),
        );
        return tokensPage(deps, s, new URL(request.url), secretBox("new-token", minted.token, "This token is shown only this once. Use it as Authorization: Bearer <token>."));
      }, "/settings/tokens"),
    )
    .post("/settings/tokens/:id/revoke", ({ request, params, body }) =>
      formAction(deps, request, body, async (s) => {
        await deps.writer.write(() => {
          const t = deps.db.select({ id: tokens.id }).from(tokens).where(and(eq(tokens.id, params.id), eq(tokens.workspaceId, s.workspaceId))).get();
          if (!t) throw new AppError("not_found", "no such token");
          revokeToken(deps, t.id);
        });
        return back("/settings/tokens", "ok", "Token revoked: it answers 401 from now on.");
      }, "/settings/tokens"),
    )
    .post("/settings/extension-token", ({ request, body }) =>
      formAction(deps, request, body, async (s, b) => {
        const minted = await deps.writer.write(() => mintExtensionToken(deps, { accountId: s.account.id, workspaceId: s.workspaceId, noteId: str(b.note_id) }));
        return tokensPage(deps, s, new URL(request.url), secretBox("ext-token", minted.token, "Paste this into the browser extension. It is shown only this once."));
      }, "/settings/tokens"),
    )
    .post("/settings/trial", ({ request, body }) =>
      formAction(deps, request, body, async (s) => {
        await deps.writer.write(() => startTrial(deps, s.workspaceId));
        return back("/settings", "ok", "Your 14-day API trial has started. Create a token on the API tokens page.");
      }, "/settings"),
    )
    .post("/settings/export", ({ request, body }) =>
      formAction(deps, request, body, async (s) => {
        await requestExport({ ctx: s.ctx, origin: origin(deps, request) });
        return back("/settings", "ok", "We're building your export and will mail you the link.");
      }, "/settings"),
    )
    .get("/exports/:id/download", ({ request, params }) => {
      const s = requireSession(deps, request);
      if (s instanceof Response) return s;
      try {
        const file = exportFile({ ctx: s.ctx, id: params.id });
        return new Response(Bun.file(file.path), { headers: { "content-type": "application/zip", "content-disposition": `attachment; filename="${file.name}"` } });
      } catch {
        return page(layout({ title: "Not found", session: s, body: html`<div class="card"><h1>Not found</h1><p>This export does not exist or its link has expired. <a href="/settings">Request a new one</a>.</p></div>` }), 404);
      }
    })
    .post("/settings/profile", ({ request, body }) =>
      formAction(deps, request, body, async (s, b) => {
        limit(deps, "profilePerAccount", s.account.id);
        await updateProfile(deps, s.account.id, { name: str(b.name), bio: str(b.bio) });
        return back("/settings", "ok", "Profile saved.");
      }, "/settings"),
    )
    .post("/settings/email", ({ request, body }) =>
      formAction(deps, request, body, async (s, b) => {
        // Counted first, so wrong passwords use up the account's three a day too.
        limit(deps, "emailChangePerAccount", s.account.id);
        await checkCurrentPassword(s.account, str(b.password));
        limit(deps, "emailChangePerTarget", str(b.email));
        await requestEmailChange(deps, s.account, str(b.email));
        return back("/settings", "ok", `We sent a confirmation link to ${normaliseEmail(str(b.email))}.`);
      }, "/settings"),
    )
    .get("/settings/email/confirm", async ({ request, query }) => {
      try {
        const account = await confirmEmailChange(deps, String(query.token ?? ""), sessionIdHash(request));
        return back("/settings", "ok", `Your address is now ${account.email}.`);
      } catch (e) {
        return back("/settings", "error", errorMessage(e));
      }
    })
    .get("/settings/access", ({ request }) => {
      const s = requireSession(deps, request);
      return s instanceof Response ? s : accessPage(s, new URL(request.url));
    })
    .post("/settings/access/revoke", ({ request, body }) =>
      formAction(deps, request, body, async (s) => {
        const [apiTokens, grants] = await deps.writer.write((): [number, number] => [revokeAccountTokens(deps, s.account.id), revokeAccountGrants(deps, s.account.id)]);
        return back("/settings/access", "ok", `Revoked ${counted(apiTokens, "API token")} and ${counted(grants, "AI-client grant")}: they answer 401 from now on.`);
      }, "/settings/access"),
    )
    .get("/notes/:id/settings", ({ request, params }) => {
      const s = requireSession(deps, request);
      if (s instanceof Response) return s;
      try {
        return streamSettingsPage(deps, s, params.id, new URL(request.url));
      } catch {
        return page(layout({ title: "Not found", session: s, body: html`<div class="card"><h1>Not found</h1><p><a href="/notes">Back to your notes</a></p></div>` }), 404);
      }
    })
    .post("/notes/:id/webhook", ({ request, params, body }) =>
      formAction(deps, request, body, async (s, b) => {
        const remove = str(b.remove) === "yes";
        const url = str(b.webhook_url).trim();
        await updateNote({
          ctx: s.ctx,
          id: params.id,
          input: { webhook_url: remove || !url ? null : url, webhook_format: (str(b.webhook_format) || "generic") as WebhookFormat },
        });
        return back(`/notes/${params.id}/settings`, "ok", remove || !url ? "Webhook removed." : "Webhook saved: the next append is delivered.");
      }, `/notes/${params.id}/settings`),
    )
    .post("/notes/:id/deadman", ({ request, params, body }) =>
      formAction(deps, request, body, async (s, b) => {
        const off = str(b.off) === "yes" || !str(b.every);
        const seconds = Math.round(Number(str(b.every)) * (str(b.unit) === "minutes" ? 60 : 3600));
        await updateNote({
          ctx: s.ctx,
          id: params.id,
          input: { expected_interval_seconds: off ? null : seconds, alert_email: off ? undefined : str(b.alert_email).trim() || null },
        });
        return back(`/notes/${params.id}/settings`, "ok", off ? "Alerts turned off." : "Saved: we'll mail if it goes quiet.");
      }, `/notes/${params.id}/settings`),
    )
    .post("/notes/:id/inbox/rotate", ({ request, params, body }) =>
      formAction(deps, request, body, async (s) => {
        const r = await rotateInbox({ ctx: s.ctx, noteId: params.id, baseUrl: origin(deps, request) });
        return streamSettingsPage(
          deps,
          s,
          params.id,
          new URL(request.url),
          secretBox("inbox-url", r.body.inbox_url, "Give this URL to the sender. It is shown only this once; anyone with it can add lines."),
        );
      }, `/notes/${params.id}/settings`),
    )
    .post("/notes/:id/inbox/disable", ({ request, params, body }) =>
      formAction(deps, request, body, async (s) => {
        await disableInbox({ ctx: s.ctx, noteId: params.id });
        return back(`/notes/${params.id}/settings`, "ok", "Inbox turned off: its URL answers 404 now.");
      }, `/notes/${params.id}/settings`),
    )
    .post("/notes/:id/inbox/:did/replay", ({ request, params, body }) =>
      formAction(deps, request, body, async (s) => {
        await replayDelivery({ ctx: s.ctx, noteId: params.id, deliveryId: params.did });
        return back(`/notes/${params.id}/settings`, "ok", "Queued again: it will be added to the note in a moment.");
      }, `/notes/${params.id}/settings`),
    );

