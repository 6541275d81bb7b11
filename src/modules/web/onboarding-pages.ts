import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { AppError } from "../../http/errors";
import { publicOrigin } from "../../http/origin";
import { redirectWithFlash, secretCard, takeFlash } from "../../web/flash";
import { html, page, type Html } from "../../web/html";
import { csrfField, flashFrom, layout, redirect } from "../../web/layout";
import { pageMacros } from "../../web/macros";
import type { WebSession } from "../../web/session";
import { setUsageMode, startCodeMode } from "../accounts/onboarding";
import { TRIAL_DAYS } from "../../limits/plans";
import { visibleNote } from "../notes/repo";
import { cursorOf, endOf, newestLines } from "../streams/lines";
import { getWorkspace, tierOf } from "../workspaces/repo";
import { firstValue, formFields } from "./form";

/**
 * The onboarding a first sign-in lands on (auth-pages.ts, once per account): writing in the
 * browser, or sending from code, which starts the API trial, makes a stream and a token, and
 * shows what to paste and the first line arriving. Skipping is a link; the account page leads
 * back here at any time.
 */

const day = (ms: number | null) => (ms === null ? "" : new Date(ms).toISOString().slice(0, 10));

/** What code mode will do for this workspace, or why it cannot. */
async function codeChoice(deps: Deps, s: WebSession): Promise<{ can: boolean; text: string }> {
  const ws = await getWorkspace(deps, s.workspaceId);
  const tier = tierOf(deps, ws);
  if (ws.state === "trial") return { can: true, text: `Your API trial runs until ${day(ws.trialEndsAt)}. Makes a stream and a token, and shows what to paste.` };
  if (ws.state === "trial_ended") return { can: false, text: "Your API trial has ended: sending needs a plan with the API (Plans, on the account page)." };
  if (tier.api) return { can: true, text: "Scripts, cron jobs, CI and AI agents append lines over the API. Makes a stream and a token, and shows what to paste." };
  if (ws.trialUsed) return { can: false, text: "This account has had its API trial: sending needs a plan with the API (Plans, on the account page)." };
  return {
    can: true,
    text: `Scripts, cron jobs, CI and AI agents append lines over the API. Starts your ${TRIAL_DAYS}-day API trial now (100 notes, 300 MB; once per account), makes a stream and a token, and shows what to paste.`,
  };
}

async function choosePage(deps: Deps, s: WebSession, url: URL): Promise<Response> {
  const code = await codeChoice(deps, s);
  return page(
    layout({
      title: "Welcome",
      session: s,
      flash: flashFrom(url),
      body: html`<div class="card onboarding"><h1>What will you use notestream for?</h1>
<p class="small">Pick one to get started. Either way both work: notes in the browser and streams from code. You can come back here from the account page.</p>
<form method="post" action="/onboarding">${csrfField(s)}<div class="choices">
  <button class="choice" name="mode" value="browser"><strong>Writing notes in the browser</strong><span>Plain and rich-text notes, folders, earlier versions, downloads and exports.</span></button>
  ${
    code.can
      ? html`<button class="choice" name="mode" value="code"><strong>Sending from code</strong><span>${code.text}</span></button>`
      : html`<div class="card gate"><strong>Sending from code</strong><p class="small">${code.text} <a href="/settings#plan">See the plans</a>.</p></div>`
  }
</div></form>
<p><a href="/notes">Skip for now</a></p></div>`,
    }),
  );
}

/** A command to copy, in a read-only field the copy button reads. */
function snippet(id: string, label: string, text: string, hint?: Html): Html {
  const rows = text.split("\n").length;
  return html`<div class="snippet"><label for="${id}"><span>${label}</span></label><div class="row"><textarea id="${id}" class="snippet-text grow" rows="${rows}" readonly spellcheck="false" autocomplete="off">${text}</textarea><button type="button" data-copy="${id}" aria-label="Copy: ${label}">Copy</button></div>${hint ? html`<p class="muted small">${hint}</p>` : ""}</div>`;
}

const line = (l: { text: string; at: string }) => html`<span class="ln" data-at="${l.at}">${l.text}\n</span>`;

async function codePage(deps: Deps, s: WebSession, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const noteId = url.searchParams.get("stream") ?? "";
  let note;
  try {
    note = await visibleNote(s.ctx, noteId);
  } catch {
    return redirect("/onboarding");
  }
  if (note.kind !== "stream" || !note.filename) return redirect("/onboarding");
  const { flash, headers } = takeFlash(deps, s, request);
  const token = flash.secret?.kind === "token" ? flash.secret.value : null;
  const shownToken = token ?? "nst_…";
  const origin = publicOrigin(deps, request);
  const ws = await getWorkspace(deps, s.workspaceId);
  const tier = tierOf(deps, ws);
  const tail = await newestLines(deps, note.id, 16 * 1024);
  const end = tail.lines.at(-1)?.cursor ?? cursorOf(await endOf(deps, note.id));
  const filename = note.filename;
  const mcp = JSON.stringify(
    { mcpServers: { notestream: { command: "notestream", args: ["mcp"], env: { NOTESTREAM_URL: origin, NOTESTREAM_TOKEN: shownToken } } } },
    null,
    2,
  );
  return page(
    layout({
      title: "Send your first line",
      session: s,
      flash: { ...flashFrom(url), ...flash },
      body: html`<div class="onboarding">
<h1>Send your first line</h1>
<p class="small">${
        ws.state === "trial" ? `Your API trial runs until ${day(ws.trialEndsAt)}: 100 notes, 300 MB, the REST API. ` : ""
      }Your stream is <code>${filename}</code>; the token below may read and append (${tier.rate ? `${tier.rate.appends} appends a minute` : "no rate limit"}).</p>
${token ? secretCard("new-token", "New API token", token, "This token is shown only this once: the commands below carry it. Keep it in your scripts' secrets.") : html`<p class="muted small">The token was shown once, when it was made; the commands below have <code>nst_…</code> in its place. Make another on the <a href="/settings/tokens">API tokens</a> page.</p>`}
<div class="card"><h2>Paste one of these</h2>
${snippet("snippet-curl", "curl", `curl -X POST ${origin}/api/v1/notes/by-filename/${filename}/append -H "Authorization: Bearer ${shownToken}" -H "Content-Type: text/plain" --data-binary "hello from curl"`)}
${snippet("snippet-cli", "The notestream command", `NOTESTREAM_URL=${origin} NOTESTREAM_TOKEN=${shownToken} notestream append ${filename} "hello from notestream"`, html`The same binary as the server; <code>notestream run -- your-job</code> reports a job's start, end and failure.`)}
${snippet(
  "snippet-mcp",
  "An AI client (MCP), e.g. claude_desktop_config.json or .cursor/mcp.json",
  mcp,
  html`Lets the client list, read and append with this token${ws.plan === "free" ? " (writes by agents need a paid plan; reading works now)" : ""}. Or add <code>${origin}/mcp</code> and sign in from the client instead.`,
)}
</div>
<div class="card first-line"><h2>Your stream</h2>
<div class="row spread small mb10"><span class="live" id="live-state" role="status" hidden>Connecting…</span><a href="/notes/${note.id}">Open <code>${filename}</code></a></div>
<pre class="stream" data-tail="/notes/${note.id}/events" data-cursor="${end}" aria-live="polite">${tail.lines.map(line)}</pre>
<p class="waiting status">Waiting for your first line: run one of the commands above, it shows up here.</p>
<p class="arrived" role="status">It arrived. <a href="/notes/${note.id}">Open the stream</a> or <a href="/notes">go to your notes</a>.</p>
</div></div>`,
    }),
    200,
    headers,
  );
}

/** The account page's card: what was chosen, and the way back to the onboarding. */
export function usageCard(s: WebSession): Html {
  const mode = s.account.usageMode;
  const chosen = mode === "code" ? "sending from code" : mode === "browser" ? "writing in the browser" : null;
  return html`<div class="card" id="getting-started"><h2>Getting started</h2><p class="small">${
    chosen ? html`You said this account is mostly for ${chosen}.` : "You have not said what this account is for yet."
  } <a href="/onboarding">${mode === "code" ? "Set up another stream and token" : "Send from code, or change the choice"}</a>.</p></div>`;
}

export const onboardingPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .get("/onboarding", ({ s, request }) => choosePage(deps, s, new URL(request.url)), { session: "page" })
    .post(
      "/onboarding",
      async ({ s, body }) => {
        const mode = firstValue(formFields(body).mode);
        if (mode === "browser") {
          await deps.writer.write(() => setUsageMode(deps, s.account.id, "browser"));
          return redirect("/notes");
        }
        if (mode !== "code") throw new AppError("bad_request", "Choose the browser or code.");
        const started = await startCodeMode(s.ctx);
        return redirectWithFlash(deps, s, `/onboarding/code?stream=${started.streamId}`, {
          ok: started.trialStarted ? `Your ${TRIAL_DAYS}-day API trial has started, with a stream and a token.` : "Your stream and token are ready.",
          secret: { kind: "token", value: started.token },
        });
      },
      { session: "form", refused: "/onboarding" },
    )
    .get("/onboarding/code", ({ s, request }) => codePage(deps, s, request), { session: "page" });
