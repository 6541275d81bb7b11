import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import type { Deps } from "../deps";
import { html, type Html } from "./html";
import { redirect, type Flash } from "./layout";
import { cookieValue, type WebSession } from "./session";

/**
 * One-time messages across a post/redirect/get: a form that creates or rotates something answers
 * with a 303 to a page, and what that page must show once (the new token, the inbox URL, "Saved")
 * travels in a short-lived cookie scoped to the page's path, cleared by the answer that shows it.
 * So a reload shows nothing again and re-posts nothing, and no secret is ever in a URL (where
 * history, proxies and logs would keep it).
 *
 * The cookie is sealed (AES-256-GCM) with a key derived from the session's CSRF token, which lives
 * in the database and never in a cookie: any instance serving the session can open it, nothing is
 * kept in process memory, the cookie jar alone does not hold the secret in the clear, and a flash
 * set for one session, or one page, is never shown to another.
 */
export interface OneTimeFlash extends Flash {
  /** A secret shown once; `kind` picks its label and explanation on the page, so the cookie carries only the value. */
  secret?: { kind: string; value: string };
}

export const FLASH_COOKIE = "ns_flash";
/** Long enough for the redirect to be followed on a slow connection; the page clears it at once. */
const FLASH_TTL_SECONDS = 120;

const keyFor = (s: WebSession) => createHmac("sha256", s.csrf).update("notestream one-time flash").digest();

function cookie(path: string, value: string, maxAge: number): string {
  return `${FLASH_COOKIE}=${value}; Path=${path}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}`;
}

/** The path a page is served at, without its query: the cookie's scope and the seal's associated data. */
const pathOf = (location: string) => new URL(location, "http://x").pathname;

function seal(deps: Deps, s: WebSession, path: string, flash: OneTimeFlash): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyFor(s), iv);
  cipher.setAAD(Buffer.from(path));
  const payload = JSON.stringify({ ...flash, exp: deps.clock.now() + FLASH_TTL_SECONDS * 1000 });
  const sealed = Buffer.concat([cipher.update(payload, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64url");
}

function open(deps: Deps, s: WebSession, path: string, value: string): OneTimeFlash | null {
  try {
    const raw = Buffer.from(value, "base64url");
    if (raw.length < 29) return null;
    const decipher = createDecipheriv("aes-256-gcm", keyFor(s), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(path));
    decipher.setAuthTag(raw.subarray(12, 28));
    const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
    const { exp, ...flash } = JSON.parse(text) as OneTimeFlash & { exp: number };
    return typeof exp === "number" && exp > deps.clock.now() ? flash : null;
  } catch {
    // Another session's, another page's, tampered or from an older key: nothing to show.
    return null;
  }
}

/** A 303 to `location` (a page of ours) that shows `flash` there once. */
export function redirectWithFlash(deps: Deps, s: WebSession, location: string, flash: OneTimeFlash): Response {
  const path = pathOf(location);
  return redirect(location, { "set-cookie": cookie(path, seal(deps, s, path, flash), FLASH_TTL_SECONDS) });
}

/**
 * The flash waiting for this page, if any, and the header that clears it: the answer that shows
 * it must send `headers`, so a reload shows it no more.
 */
export function takeFlash(deps: Deps, s: WebSession, request: Request): { flash: OneTimeFlash; headers: Record<string, string> } {
  const value = cookieValue(request, FLASH_COOKIE);
  if (!value) return { flash: {}, headers: {} };
  const path = new URL(request.url).pathname;
  return { flash: open(deps, s, path, value) ?? {}, headers: { "set-cookie": cookie(path, "", 0) } };
}

/**
 * A secret shown once, in a box that wraps or scrolls inside itself on a narrow screen: a labelled
 * read-only field (so it is selected whole) and a copy button.
 */
export function secretField(id: string, label: string, value: string): Html {
  return html`<div class="secret"><label class="sr-only" for="${id}">${label}</label><input type="text" id="${id}" value="${value}" readonly autocomplete="off" spellcheck="false"><button type="button" data-copy="${id}" aria-label="Copy ${label.toLowerCase()}">Copy</button></div>`;
}

/** The card a page shows a one-time secret in, above everything else. */
export function secretCard(id: string, label: string, value: string, note: string): Html {
  return html`<div class="card secret-card"><h2>Copy it now</h2><p class="small">${note}</p>${secretField(id, label, value)}</div>`;
}
