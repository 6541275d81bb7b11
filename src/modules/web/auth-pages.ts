import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { AppError, ValidationFailed } from "../../http/errors";
import { randomBase62 } from "../../lib/random";
import { clientIp, FormRefused, sameOrigin } from "../../web/guard";
import { html, page } from "../../web/html";
import { back, flashFrom, layout, redirect } from "../../web/layout";
import { pageMacros } from "../../web/macros";
import { refusalMessage } from "../../web/refusal";
import { cookieValue, createSession, csrfMatches, destroySession, FORM_COOKIE, formCookie, loadSession, sessionCookie } from "../../web/session";
import { PASSWORD_SPECIALS } from "../accounts/password";
import { normaliseEmail } from "../accounts/service";
import {
  confirmEmail,
  MIN_AGE,
  requestPasswordReset,
  resendConfirmation,
  resetPassword,
  signIn,
  signUp,
  signUpProblems,
} from "../accounts/web-auth";
import { textFields } from "./form";
import { limit } from "./limits";

/** A form shown before sign-in, with its double-submit CSRF token set as a cookie. */
function publicForm(deps: Deps, request: Request, title: string, body: (csrf: string) => ReturnType<typeof html>, status = 200): Response {
  const token = cookieValue(request, FORM_COOKIE) ?? randomBase62(32);
  return page(layout({ title, flash: flashFrom(new URL(request.url)), body: body(token) }), status, { "set-cookie": formCookie(deps, token) });
}

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

const passwordHint = `8 to 128 characters, with an upper- and a lower-case letter, a digit and one of ${PASSWORD_SPECIALS}`;

const tooMany = (e: AppError) => e.code === "rate_limited";

function signInRefused(e: AppError): Response {
  return page(
    layout({
      title: "Sign in",
      flash: { error: refusalMessage(e) },
      body: html`<div class="narrow card"><h1>Sign in</h1><p><a href="/signin">Try again</a> · <a href="/reset">Reset your password</a></p></div>`,
    }),
    tooMany(e) ? 429 : 400,
    e.headers ?? {},
  );
}

function signUpRefused(e: AppError): Response {
  return page(
    layout({ title: "Create an account", flash: { error: refusalMessage(e) }, body: html`<div class="narrow card"><p><a href="/signup">Back to the form</a></p></div>` }),
    tooMany(e) ? 429 : 422,
  );
}

export const authPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .get("/", ({ request }) => redirect(loadSession(deps, request) ? "/notes" : "/signin"))
    .get("/signin", ({ request, query }) =>
      publicForm(deps, request, "Sign in", (csrf) => html`<div class="narrow card">
  <h1>Sign in</h1>
  <form method="post" action="/signin">
    <input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="next" value="${query.next ?? ""}">
    <label><span>E-mail</span><input type="email" name="email" required autocomplete="email" autofocus></label>
    <label><span>Password</span><input type="password" name="password" required autocomplete="current-password"></label>
    <div class="row spread"><button class="primary" type="submit">Sign in</button><a href="/reset">Forgot your password?</a></div>
  </form>
  <p class="muted small">No account yet? <a href="/signup">Create one</a>. Didn't get the confirmation mail? <a href="/confirm/resend">Send it again</a>.</p>
</div>`),
    )
    .post(
      "/signin",
      async ({ request, body }) => {
        const b = textFields(body);
        limit(deps, "signInPerIp", clientIp(request));
        // Counted before the check, so parallel guesses cannot all slip under it; given back on success.
        const perEmail = limit(deps, "signInPerEmail", b.email ?? "");
        const account = await signIn(deps, b.email ?? "", b.password ?? "");
        perEmail.refund();
        const { secret } = await createSession(deps, account);
        return redirect(safeNext(deps, request, b.next), { "set-cookie": sessionCookie(deps, secret, 30 * 86_400) });
      },
      { publicForm: true, refused: signInRefused },
    )
    .post("/signout", async ({ request, body }) => {
      // The token from the form field only: sign-out is a plain form, never the pages' script.
      const s = loadSession(deps, request);
      if (!s || !csrfMatches(s.csrf, textFields(body)._csrf) || !sameOrigin(deps, request)) throw new FormRefused();
      await destroySession(deps, request);
      return redirect("/signin?ok=" + encodeURIComponent("Signed out."), { "set-cookie": sessionCookie(deps, "", 0) });
    })
    .get("/signup", ({ request }) =>
      publicForm(deps, request, "Create an account", (csrf) => html`<div class="narrow card">
  <h1>Create your account</h1>
  <form method="post" action="/signup">
    <input type="hidden" name="_csrf" value="${csrf}">
    <label><span>E-mail</span><input type="email" name="email" required autocomplete="email" autofocus></label>
    <label><span>Password</span><input type="password" name="password" required minlength="8" maxlength="128" autocomplete="new-password"></label>
    <p class="muted small">${passwordHint}.</p>
    <label><span>Birth date</span><input type="date" name="birth_date"></label>
    <label class="check"><input type="checkbox" name="age_confirmed" value="yes"> I am ${MIN_AGE} or older (instead of a birth date)</label>
    <button class="primary" type="submit">Create account</button>
  </form>
  <p class="muted small">We send a link to confirm the address. Already have an account? <a href="/signin">Sign in</a>.</p>
</div>`),
    )
    .post(
      "/signup",
      async ({ request, body }) => {
        const b = textFields(body);
        limit(deps, "signUpPerIp", clientIp(request));
        const input = { email: b.email ?? "", password: b.password ?? "", birthDate: b.birth_date || undefined, ageConfirmed: b.age_confirmed === "yes" };
        const problems = signUpProblems(deps, input);
        if (problems.length) throw new ValidationFailed(problems);
        // A valid sign-up mails whoever owns the address, so it is limited per address like every
        // mail; fixing the form's mistakes is not.
        limit(deps, "signUpPerEmail", input.email);
        await signUp(deps, input);
        // The same answer whether the address was new or taken (its owner got a mail instead).
        return redirect("/signin?ok=" + encodeURIComponent(`Almost there: we sent a confirmation link to ${normaliseEmail(b.email ?? "")}.`));
      },
      { publicForm: true, refused: signUpRefused },
    )
    .get(
      "/confirm",
      async ({ query }) => {
        await confirmEmail(deps, String(query.token ?? ""));
        return redirect("/signin?ok=" + encodeURIComponent("Your address is confirmed. Sign in to start."));
      },
      { refused: "/signin" },
    )
    .get("/confirm/resend", ({ request }) =>
      publicForm(deps, request, "Resend confirmation", (csrf) => html`<div class="narrow card"><h1>Send the confirmation again</h1>
  <form method="post" action="/confirm/resend"><input type="hidden" name="_csrf" value="${csrf}">
  <label><span>E-mail</span><input type="email" name="email" required></label><button class="primary">Send</button></form></div>`),
    )
    .post(
      "/confirm/resend",
      async ({ request, body }) => {
        const b = textFields(body);
        limit(deps, "resendPerIp", clientIp(request));
        limit(deps, "resendPerEmail", b.email ?? "");
        await resendConfirmation(deps, b.email ?? "");
        return back("/signin", "ok", "If that address has an unconfirmed account, a new link is on its way.");
      },
      { publicForm: true, refused: "/confirm/resend" },
    )
    .get("/reset", ({ request }) =>
      publicForm(deps, request, "Reset your password", (csrf) => html`<div class="narrow card"><h1>Reset your password</h1>
  <form method="post" action="/reset"><input type="hidden" name="_csrf" value="${csrf}">
  <label><span>E-mail</span><input type="email" name="email" required autofocus></label><button class="primary">Send a reset link</button></form></div>`),
    )
    .post(
      "/reset",
      async ({ request, body }) => {
        const b = textFields(body);
        limit(deps, "resetPerIp", clientIp(request));
        limit(deps, "resetPerEmail", b.email ?? "");
        await requestPasswordReset(deps, b.email ?? "");
        return back("/signin", "ok", "If that address has an account, a reset link is on its way.");
      },
      { publicForm: true, refused: "/reset" },
    )
    .get("/reset/confirm", ({ request, query }) =>
      publicForm(deps, request, "Choose a new password", (csrf) => html`<div class="narrow card"><h1>Choose a new password</h1>
  <form method="post" action="/reset/confirm"><input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="token" value="${query.token ?? ""}">
  <label><span>New password</span><input type="password" name="password" required autocomplete="new-password"></label>
  <p class="muted small">${passwordHint}.</p><button class="primary">Save the password</button></form></div>`),
    )
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
      { publicForm: true, refused: (e, { body }) => back(`/reset/confirm?token=${encodeURIComponent(textFields(body).token ?? "")}`, "error", refusalMessage(e)) },
    );
