import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { ValidationFailed, type AppError } from "../../http/errors";
import { randomBase62 } from "../../lib/random";
import { clientIp, FormRefused, sameOrigin } from "../../web/guard";
import { html, page, type Html } from "../../web/html";
import { back, flashFrom, layout, redirect } from "../../web/layout";
import { pageMacros, type RefusalContext } from "../../web/macros";
import { cookieValue, createSession, csrfMatches, destroySession, FORM_COOKIE, formCookie, loadSession, sessionCookie } from "../../web/session";
import { takeOnboarding } from "../accounts/onboarding";
import { NEW_PASSWORD_ATTRS, PASSWORD_RULE } from "../accounts/password";
import { normaliseEmail } from "../accounts/service";
import {
  confirmEmail,
  MIN_AGE,
  NAME_MAX_CHARS,
  requestPasswordReset,
  resendConfirmation,
  resetPassword,
  signIn,
  signUp,
  signUpProblems,
} from "../accounts/web-auth";
import { field, formProblem, freshForm, refusedForm, refusedStatus, textFields, typedValues, type FormState } from "./form";
import { limit } from "./limits";

/** A form shown before sign-in, with its double-submit CSRF token set as a cookie. */
function publicForm(
  deps: Deps,
  request: Request,
  title: string,
  body: (csrf: string) => Html,
  status = 200,
  headers: Record<string, string> = {},
): Response {
  const token = cookieValue(request, FORM_COOKIE) ?? randomBase62(32);
  return page(layout({ title, flash: flashFrom(new URL(request.url)), body: body(token) }), status, { ...headers, "set-cookie": formCookie(deps, token) });
}

const csrfInput = (csrf: string) => html`<input type="hidden" name="_csrf" value="${csrf}">`;

/**
 * Where sign-in leads: `next` resolved as the browser will resolve it on our page, kept only if
 * it stays on our origin. A prefix check is not enough: browsers read "/\evil.example" and
 * "/\t/evil.example" as other hosts.
 */
function safeNext(deps: Deps, request: Request, next: string | undefined): string {
  if (!next) return "/notes";
  const ours = new URL(deps.config.baseUrl ?? request.url).origin;
  let url: URL;
  try {
    url = new URL(next, ours);
  } catch {
    return "/notes";
  }
  const path = url.pathname + url.search + url.hash;
  // "/.//evil.example" resolves to the path "//evil.example", itself another host in a Location.
  return url.origin === ours && !path.startsWith("//") ? path : "/notes";
}

/** What a refused public form shows again: everything typed but the password. */
function kept(body: unknown): FormState["values"] {
  const { password: _password, _csrf, ...values } = typedValues(body);
  return values;
}

/** A refusal shown as the form again, or left to page-errors.ts (a server failure). */
function showAgain(e: AppError, render: (status: number) => Response): Response | undefined {
  const status = refusedStatus(e);
  return status === null ? undefined : render(status);
}

const SIGN_IN_FIELDS = ["email", "password"] as const;

/** The sign-in form; an unconfirmed account's refusal brings the resend form, prefilled, below it. */
function signInPage(deps: Deps, request: Request, form: FormState, opts: { status?: number; headers?: Record<string, string>; unconfirmed?: boolean } = {}): Response {
  return publicForm(
    deps,
    request,
    "Sign in",
    (csrf) => html`<div class="narrow"><div class="card">
  <h1>Sign in</h1>
  <form method="post" action="/signin">
    ${csrfInput(csrf)}<input type="hidden" name="next" value="${form.values.next ?? ""}">
    ${formProblem(form)}
    ${field("signin", form, { name: "email", label: "E-mail", type: "email", attrs: 'required autocomplete="email"', autofocus: true })}
    ${field("signin", form, { name: "password", label: "Password", type: "password", attrs: 'required autocomplete="current-password"' })}
    <div class="row spread"><button class="primary" type="submit">Sign in</button><a href="/reset">Forgot your password?</a></div>
  </form>
  <p class="muted small">No account yet? <a href="/signup">Create one</a>. Didn't get the confirmation mail? <a href="/confirm/resend">Send it again</a>.</p>
</div>${
      opts.unconfirmed
        ? html`<div class="card" id="resend"><h2>Send the confirmation link again</h2>
  <p class="small">The link we mailed works for 3 days. A new one goes to the address below if it has an unconfirmed account.</p>
  <form method="post" action="/confirm/resend">${csrfInput(csrf)}
    ${field("resend", freshForm({ email: form.values.email }), { name: "email", label: "E-mail", type: "email", attrs: 'required autocomplete="email"' })}
    <button class="primary" type="submit">Send the link again</button>
  </form></div>`
        : ""
    }</div>`,
    opts.status,
    opts.headers,
  );
}

function signInRefused(deps: Deps) {
  return (e: AppError, { request, body }: RefusalContext) =>
    showAgain(e, (status) =>
      signInPage(deps, request, refusedForm(e, kept(body), SIGN_IN_FIELDS), {
        status,
        headers: e.headers,
        // Right password, unconfirmed address (web-auth.ts signIn): the way forward is a new link.
        unconfirmed: e.code === "insufficient_scope",
      }),
    );
}

const SIGN_UP_FIELDS = ["email", "name", "password", "birth_date"] as const;

function signUpPage(deps: Deps, request: Request, form: FormState, status = 200, headers: Record<string, string> = {}): Response {
  return publicForm(
    deps,
    request,
    "Create an account",
    (csrf) => html`<div class="narrow card">
  <h1>Create your account</h1>
  <form method="post" action="/signup">
    ${csrfInput(csrf)}
    ${formProblem(form)}
    ${field("signup", form, { name: "email", label: "E-mail", type: "email", attrs: 'required autocomplete="email"', autofocus: true })}
    ${field("signup", form, { name: "name", label: "Your name (optional)", attrs: `maxlength="${NAME_MAX_CHARS}" autocomplete="name"` })}
    ${field("signup", form, { name: "password", label: "Password", type: "password", attrs: NEW_PASSWORD_ATTRS, hint: `${PASSWORD_RULE}.` })}
    ${field("signup", form, { name: "birth_date", label: "Birth date", type: "date", attrs: 'autocomplete="bday"' })}
    ${field("signup", form, { name: "age_confirmed", label: `I am ${MIN_AGE} or older (instead of a birth date)`, type: "checkbox" })}
    <button class="primary" type="submit">Create account</button>
  </form>
  <p class="muted small">We send a link to confirm the address. Already have an account? <a href="/signin">Sign in</a>.</p>
</div>`,
    status,
    headers,
  );
}

function resendPage(deps: Deps, request: Request, form: FormState, status = 200, headers: Record<string, string> = {}): Response {
  return publicForm(
    deps,
    request,
    "Resend confirmation",
    (csrf) => html`<div class="narrow card"><h1>Send the confirmation again</h1>
  <form method="post" action="/confirm/resend">${csrfInput(csrf)}${formProblem(form)}
  ${field("resend", form, { name: "email", label: "E-mail", type: "email", attrs: 'required autocomplete="email"', autofocus: true })}<button class="primary">Send</button></form></div>`,
    status,
    headers,
  );
}

function resetPage(deps: Deps, request: Request, form: FormState, status = 200, headers: Record<string, string> = {}): Response {
  return publicForm(
    deps,
    request,
    "Reset your password",
    (csrf) => html`<div class="narrow card"><h1>Reset your password</h1>
  <form method="post" action="/reset">${csrfInput(csrf)}${formProblem(form)}
  ${field("reset", form, { name: "email", label: "E-mail", type: "email", attrs: 'required autocomplete="email"', autofocus: true })}<button class="primary">Send a reset link</button></form></div>`,
    status,
    headers,
  );
}

function newPasswordPage(deps: Deps, request: Request, form: FormState, status = 200): Response {
  return publicForm(
    deps,
    request,
    "Choose a new password",
    (csrf) => html`<div class="narrow card"><h1>Choose a new password</h1>
  <form method="post" action="/reset/confirm">${csrfInput(csrf)}<input type="hidden" name="token" value="${form.values.token ?? ""}">${formProblem(form)}
  ${field("newpw", form, { name: "password", label: "New password", type: "password", attrs: NEW_PASSWORD_ATTRS, hint: `${PASSWORD_RULE}.`, autofocus: true })}
  <button class="primary">Save the password</button></form>
  <p class="muted small">The link works for one hour, once. Expired? <a href="/reset">Ask for a new one</a>.</p></div>`,
    status,
  );
}

export const authPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .get("/", async ({ request }) => redirect((await loadSession(deps, request)) ? "/notes" : "/signin"))
    .get("/signin", ({ request, query }) => signInPage(deps, request, freshForm({ next: query.next ?? "" })))
    .post(
      "/signin",
      async ({ request, body }) => {
        const b = textFields(body);
        await limit(deps, "signInPerIp", clientIp(request));
        // Counted before the check, so parallel guesses cannot all slip under it; given back on success.
        const perEmail = await limit(deps, "signInPerEmail", b.email ?? "");
        const account = await signIn(deps, b.email ?? "", b.password ?? "");
        perEmail.refund();
        const { secret } = await createSession(deps, account);
        // The first sign-in lands on the onboarding, once; one on its way somewhere (an AI
        // client's consent, a note's link) goes there, and the onboarding waits for a plain one.
        const to = !b.next && (await takeOnboarding(deps, account.id)) ? "/onboarding" : safeNext(deps, request, b.next);
        return redirect(to, { "set-cookie": sessionCookie(deps, secret, 30 * 86_400) });
      },
      { publicForm: true, refused: signInRefused(deps) },
    )
    .post("/signout", async ({ request, body }) => {
      // The token from the form field only: sign-out is a plain form, never the pages' script.
      const s = await loadSession(deps, request);
      if (!s || !csrfMatches(s.csrf, textFields(body)._csrf) || !sameOrigin(deps, request)) throw new FormRefused();
      await destroySession(deps, request);
      return redirect("/signin?ok=" + encodeURIComponent("Signed out."), { "set-cookie": sessionCookie(deps, "", 0) });
    })
    .get("/signup", ({ request }) => signUpPage(deps, request, freshForm()))
    .post(
      "/signup",
      async ({ request, body }) => {
        const b = textFields(body);
        const perIp = await limit(deps, "signUpPerIp", clientIp(request));
        const input = { email: b.email ?? "", name: b.name ?? "", password: b.password ?? "", birthDate: b.birth_date || undefined, ageConfirmed: b.age_confirmed === "yes" };
        const problems = signUpProblems(deps, input);
        if (problems.length) {
          // The limit is against making accounts in bulk; a form sent back to be fixed made none.
          perIp.refund();
          throw new ValidationFailed(problems);
        }
        // A valid sign-up mails whoever owns the address, so it is limited per address like every
        // mail; fixing the form's mistakes is not.
        await limit(deps, "signUpPerEmail", input.email);
        await signUp(deps, input);
        // The same answer whether the address was new or taken (its owner got a mail instead).
        return redirect("/signin?ok=" + encodeURIComponent(`Almost there: we sent a confirmation link to ${normaliseEmail(b.email ?? "")}.`));
      },
      {
        publicForm: true,
        refused: (e, { request, body }) => showAgain(e, (status) => signUpPage(deps, request, refusedForm(e, kept(body), SIGN_UP_FIELDS), status, e.headers)),
      },
    )
    .get(
      "/confirm",
      async ({ query }) => {
        await confirmEmail(deps, String(query.token ?? ""));
        return redirect("/signin?ok=" + encodeURIComponent("Your address is confirmed. Sign in to start."));
      },
      { refused: "/signin" },
    )
    .get("/confirm/resend", ({ request }) => resendPage(deps, request, freshForm()))
    .post(
      "/confirm/resend",
      async ({ request, body }) => {
        const b = textFields(body);
        await limit(deps, "resendPerIp", clientIp(request));
        await limit(deps, "resendPerEmail", b.email ?? "");
        await resendConfirmation(deps, b.email ?? "");
        return back("/signin", "ok", "If that address has an unconfirmed account, a new link is on its way.");
      },
      { publicForm: true, refused: (e, { request, body }) => showAgain(e, (status) => resendPage(deps, request, refusedForm(e, kept(body), ["email"]), status, e.headers)) },
    )
    .get("/reset", ({ request }) => resetPage(deps, request, freshForm()))
    .post(
      "/reset",
      async ({ request, body }) => {
        const b = textFields(body);
        await limit(deps, "resetPerIp", clientIp(request));
        await limit(deps, "resetPerEmail", b.email ?? "");
        await requestPasswordReset(deps, b.email ?? "");
        return back("/signin", "ok", "If that address has an account, a reset link is on its way.");
      },
      { publicForm: true, refused: (e, { request, body }) => showAgain(e, (status) => resetPage(deps, request, refusedForm(e, kept(body), ["email"]), status, e.headers)) },
    )
    .get("/reset/confirm", ({ request, query }) => newPasswordPage(deps, request, freshForm({ token: query.token ?? "" })))
    .post(
      "/reset/confirm",
      async ({ body }) => {
        const b = textFields(body);
        // The reset ended every session; this browser proved the mailbox and set the password, so
        // it is signed in, to be offered the end of the tokens and grants too.
        const account = await resetPassword(deps, b.token ?? "", b.password ?? "");
        const { secret } = await createSession(deps, account);
        return redirect("/settings/access?ok=" + encodeURIComponent("Your password is changed, and every other browser is signed out."), {
          "set-cookie": sessionCookie(deps, secret, 30 * 86_400),
        });
      },
      { publicForm: true, refused: (e, { request, body }) => showAgain(e, (status) => newPasswordPage(deps, request, refusedForm(e, kept(body), ["password"]), status)) },
    );
