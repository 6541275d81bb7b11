import { findAccountByEmail } from "../../src/modules/accounts/service";
import { createSession, SESSION_COOKIE } from "../../src/web/session";
import type { Harness } from "./harness";

export const ORIGIN = "http://notestream.test";

/** What browsers send with a navigation or a form post: they ask for a page. */
const PAGE_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/**
 * A tiny browser over the harness: keeps cookies, asks for pages as browsers do, reads CSRF
 * tokens off pages, posts forms.
 */
export class FormBrowser {
  cookies = new Map<string, string>();
  constructor(
    private h: Harness,
    private ip = "198.51.100.7",
  ) {}
  cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
  private keep(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const [k, v] = pair!.split("=");
      if (/max-age=0\b/i.test(c)) this.cookies.delete(k!);
      else this.cookies.set(k!, v ?? "");
    }
  }
  async get(path: string, headers: Record<string, string> = {}) {
    const res = await this.h.request("GET", path, { headers: { cookie: this.cookieHeader(), accept: PAGE_ACCEPT, ...headers }, ip: this.ip });
    this.keep(res as unknown as Response);
    return { status: res.status, headers: res.headers, text: await res.text() };
  }
  csrfOf(page: string) {
    return /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? /name="csrf" content="([^"]+)"/.exec(page)?.[1] ?? "";
  }
  async post(path: string, fields: Record<string, string>, opts: { origin?: string | null; accept?: string } = {}) {
    const headers: Record<string, string> = { cookie: this.cookieHeader(), "content-type": "application/x-www-form-urlencoded", accept: opts.accept ?? PAGE_ACCEPT };
    if (opts.origin !== null) headers.origin = opts.origin ?? ORIGIN;
    const res = await this.h.request("POST", path, { headers, body: new URLSearchParams(fields).toString(), ip: this.ip });
    this.keep(res as unknown as Response);
    return { status: res.status, headers: res.headers, location: res.headers.get("location") ?? "", text: await res.text() };
  }
  /** Fetches the form page for its CSRF token, then posts. */
  async submit(formPage: string, action: string, fields: Record<string, string>) {
    const csrf = this.csrfOf((await this.get(formPage)).text);
    return this.post(action, { _csrf: csrf, ...fields });
  }
}

/** The `<input>` (or `<textarea>`) named `name` in a page, as markup, or "" when there is none. */
export function inputNamed(page: string, name: string): string {
  return new RegExp(`<(?:input|textarea)\\b[^>]*\\bname="${name}"[^>]*>`).exec(page)?.[0] ?? "";
}

/** The message a field points at through aria-describedby (its error, not its hint), and whether it says it is invalid. */
export function fieldMessage(page: string, name: string): { invalid: boolean; message: string | null } {
  const input = inputNamed(page, name);
  const ids = /aria-describedby="([^"]+)"/.exec(input)?.[1]?.split(/\s+/) ?? [];
  const messages = ids
    .map((id) => new RegExp(`<(\\w+)\\b(?=[^>]*\\bid="${id}")(?=[^>]*\\bclass="field-error")[^>]*>([^]*?)</\\1>`).exec(page)?.[2])
    .filter((m): m is string => m !== undefined)
    .map((m) => m.replace(/<[^>]+>/g, "").trim());
  return { invalid: /aria-invalid="true"/.test(input), message: messages.join(" ") || null };
}

/**
 * A signed-in browser of an existing account, without the sign-in form: its session cookie and
 * CSRF token, GETs, form posts (Origin set, as a page's own form sends it) and the JSON posts of
 * the page's script (CSRF header).
 */
export async function sessionBrowser(h: Harness, email: string) {
  const { secret } = await createSession(h.deps, (await findAccountByEmail(h.deps, email))!);
  const cookie = `${SESSION_COOKIE}=${secret}`;
  const get = async (path: string) => {
    const res = await h.request("GET", path, { headers: { cookie } });
    return { status: res.status, location: res.headers.get("location") ?? "", text: await res.text() };
  };
  const csrf = /name="csrf" content="([^"]+)"/.exec((await get("/notes")).text)![1]!;
  const form = async (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) => {
    const res = await h.request("POST", path, {
      headers: { cookie, origin: ORIGIN, "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams(fields).toString(),
    });
    return { status: res.status, location: res.headers.get("location") ?? "", text: await res.text() };
  };
  const json = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    h.request("POST", path, { headers: { cookie, origin: ORIGIN, "x-csrf-token": csrf, ...headers }, body });
  return { secret, cookie, csrf, get, form, json };
}
