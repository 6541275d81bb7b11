import { html, raw, type Html } from "./html";
import type { WebSession } from "./session";

export interface Flash {
  error?: string | null;
  ok?: string | null;
}

export function flashFrom(url: URL): Flash {
  return { error: url.searchParams.get("error"), ok: url.searchParams.get("ok") };
}

function flashes(f: Flash): Html {
  return html`${f.error ? html`<div class="flash error" role="alert">${f.error}</div>` : ""}${f.ok ? html`<div class="flash ok" role="status">${f.ok}</div>` : ""}`;
}

/** Where the workspace switcher leads back to: the same section of the other workspace (a note's page would be another's 404). */
const SECTION_HOME: Record<string, string> = { notes: "/notes", channels: "/channels", tokens: "/settings/tokens", settings: "/settings" };

function navLink(href: string, label: string, on: boolean): Html {
  return html`<a href="${href}" class="${on ? "on" : ""}" ${on ? raw('aria-current="page"') : ""}>${label}</a>`;
}

/** Members of a team choose the workspace the session works in; a plain form, so it works without the script. */
function workspaceSwitcher(s: WebSession, active: string | undefined): Html | "" {
  if (s.workspaces.length < 2) return "";
  return html`<form method="post" action="/workspace" class="switcher">${csrfField(s)}<input type="hidden" name="next" value="${SECTION_HOME[active ?? ""] ?? "/notes"}"><label for="workspace-choice" class="sr-only">Workspace</label><select id="workspace-choice" name="workspace_id">${s.workspaces.map(
    (w) => html`<option value="${w.id}" ${w.id === s.workspaceId ? raw("selected") : ""}>${w.kind === "personal" ? "Personal" : w.name}</option>`,
  )}</select><button type="submit">Switch</button></form>`;
}

/**
 * The theme toggle needs the script, so it is hidden until the script shows it. theme.js, loaded
 * blocking in the head, applies a stored choice before the first paint; without one the
 * stylesheet follows the system's colour scheme.
 */
const themeToggle = html`<button type="button" class="theme-toggle" data-theme-toggle aria-pressed="false" title="Light or dark, remembered in this browser" hidden><span class="theme-label">Dark theme</span></button>`;

/**
 * Every page has an h1 (screen readers list and jump by headings). A page that renders none (a
 * note's editor, whose title is a field) gets one from its title, for screen readers only.
 */
const hasHeading = (body: Html) => /<h1[\s>]/.test(body.value);

export function layout(opts: { title: string; session?: WebSession | null; active?: string; flash?: Flash; body: Html }): Html {
  const s = opts.session;
  return html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title} · notestream</title>
${s ? html`<meta name="csrf" content="${s.csrf}">` : ""}
<link rel="stylesheet" href="/assets/app.css">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<script src="/assets/theme.js"></script>
<script src="/assets/app.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to the content</a>
<header class="top">
  <a class="brand" href="${s ? "/notes" : "/"}">notestream</a>
  ${
    s
      ? html`<nav aria-label="Main">${navLink("/notes", "Notes", opts.active === "notes")}${navLink("/channels", "Channels", opts.active === "channels")}${navLink("/settings/tokens", "API tokens", opts.active === "tokens")}${navLink("/settings", "Account", opts.active === "settings")}</nav>
  <div class="tools">${workspaceSwitcher(s, opts.active)}${themeToggle}<span class="who">${s.account.name || s.account.email}</span>
  <form method="post" action="/signout"><input type="hidden" name="_csrf" value="${s.csrf}"><button class="link" type="submit">Sign out</button></form></div>`
      : html`<nav aria-label="Main"></nav><div class="tools">${themeToggle}<a href="/signin">Sign in</a><a class="button primary" href="/signup">Create account</a></div>`
  }
</header>
<main id="main">
${hasHeading(opts.body) ? "" : html`<h1 class="sr-only">${opts.title}</h1>`}
${flashes(opts.flash ?? {})}
${opts.body}
</main>
</body>
</html>`;
}

export const csrfField = (s: WebSession) => html`<input type="hidden" name="_csrf" value="${s.csrf}">`;

export function redirect(location: string, headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { location, ...headers } });
}

/** Back to a page with a message shown on it. */
export function back(path: string, kind: "error" | "ok", message: string): Response {
  const sep = path.includes("?") ? "&" : "?";
  return redirect(`${path}${sep}${kind}=${encodeURIComponent(message)}`);
}

export function bytes(n: number | null): string {
  if (n === null) return "unlimited";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(1)} GB`;
}

export function when(iso: string | null): Html {
  if (!iso) return html`<span class="muted">never</span>`;
  return html`<time datetime="${iso}" title="${iso}">${iso.replace("T", " ").slice(0, 16)} UTC</time>`;
}
