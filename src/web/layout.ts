import { html, type Html } from "./html";
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

export function layout(opts: { title: string; session?: WebSession | null; active?: string; flash?: Flash; body: Html }): Html {
  const s = opts.session;
  return html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title} · notestream</title>
${s ? html`<meta name="csrf" content="${s.csrf}">` : ""}
<link rel="stylesheet" href="/assets/app.css">
<script src="/assets/app.js" defer></script>
</head>
<body>
<header class="top">
  <a class="brand" href="${s ? "/notes" : "/"}">notestream</a>
  ${
    s
      ? html`<nav><a href="/notes" class="${opts.active === "notes" ? "on" : ""}">Notes</a><a href="/settings/tokens" class="${opts.active === "tokens" ? "on" : ""}">API tokens</a><a href="/settings" class="${opts.active === "settings" ? "on" : ""}">Account</a></nav>
  <span class="who">${s.account.name || s.account.email}</span>
  <form method="post" action="/signout"><input type="hidden" name="_csrf" value="${s.csrf}"><button class="link" type="submit">Sign out</button></form>`
      : html`<nav></nav><a href="/signin">Sign in</a><a class="button primary" href="/signup">Create account</a>`
  }
</header>
<main>
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

/** A secret shown once (a new token, an inbox URL), with a copy button. */
export function secretBox(id: string, value: string, note: string): Html {
  return html`<div class="card"><h2>Copy it now</h2><p class="small">${note}</p><div class="secret"><input type="text" id="${id}" value="${value}" readonly><button type="button" data-copy="${id}">Copy</button></div></div>`;
}
