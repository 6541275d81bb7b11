import { Elysia } from "elysia";
import type { Deps } from "../deps";
import { AppError } from "../http/errors";
import { pathOf } from "../lib/url";
import { FormRefused, SignInRequired } from "./guard";
import { html, page } from "./html";
import { back, layout, redirect } from "./layout";
import type { RefusalContext, RefusalPage } from "./macros";
import { refusalMessage } from "./refusal";
import { loadSession, type WebSession } from "./session";

const fill = (path: string, params: Record<string, string>) => path.replace(/:(\w+)/g, (_, name: string) => params[name] ?? "");

/** Paths whose clients read JSON (or nothing) whatever they accept: the API, MCP, OAuth's machine endpoints, webhooks, probes. */
const MACHINE_PATHS = /^\/(?:api\/|mcp(?:\/|$)|oauth\/(?:register|token|revoke)(?:\/|$)|\.well-known\/|h\/|webhooks\/|up(?:\/|$)|metrics$)/;

/**
 * A browser asking for a page: navigations and form posts accept text/html; the pages' own
 * scripts (fetch, EventSource) and API clients do not, and keep their JSON answers.
 */
export function wantsPage(request: Request): boolean {
  return !MACHINE_PATHS.test(pathOf(request.url)) && (request.headers.get("accept") ?? "").includes("text/html");
}

const TITLES: Record<number, string> = {
  400: "That did not work",
  403: "Not allowed",
  404: "Not found",
  409: "That cannot be done now",
  413: "That was too large",
  423: "Locked",
  429: "Too many attempts",
};

/** The session, if the database can still tell: an error page must not fail itself. */
async function sessionOf(deps: Deps, request: Request): Promise<WebSession | null> {
  try {
    return await loadSession(deps, request);
  } catch {
    return null;
  }
}

/** An error as a page in the layout, with the way back: the notes when signed in, else the start. */
async function errorPage(deps: Deps, request: Request, status: number, title: string, text: string, headers: Record<string, string> = {}): Promise<Response> {
  const s = await sessionOf(deps, request);
  const way = s ? html`<a class="button primary" href="/notes">Back to your notes</a> <a href="/settings">Account</a>` : html`<a class="button primary" href="/">Go to the start</a> <a href="/signin">Sign in</a>`;
  return page(
    layout({ title, session: s, body: html`<div class="card error-page"><h1>${title}</h1><p>${text}</p><p class="row">${way}</p></div>` }),
    status,
    headers,
  );
}

/**
 * How pages answer what stops them: sign-in, a refused form, and a service's refusal (an
 * AppError) on routes that declared `refused` (macros.ts), whose resolve put it on the context.
 * Then, for a browser asking for a page (wantsPage), every other error is a page too: an unknown
 * path (404), a refusal no route answered, a request the router could not read (400), a failure
 * (500, logged). It must be registered before the API's error handler: Elysia asks onError hooks
 * in registration order and takes the first answer. Anything else (an API route's error, the
 * pages' scripts) gets no answer here and falls through to the API's envelope.
 */
export const pageErrors = (deps: Deps) =>
  new Elysia().onError({ as: "global" }, async (ctx) => {
    const { error, code, request } = ctx;
    if (error instanceof SignInRequired) {
      return error.returnTo === null ? new Response(null, { status: 401 }) : redirect(`/signin?next=${encodeURIComponent(error.returnTo)}`);
    }
    if (error instanceof FormRefused) {
      if (wantsPage(request)) return errorPage(deps, request, 403, "This form could not be sent", `${error.message} What you typed was not saved: go back, copy it if you need it, and reload.`);
      return new Response(error.message, { status: 403, headers: { "content-type": "text/plain; charset=utf-8" } });
    }
    // A parser hook's own AppError reaches here wrapped in Elysia's ParseError.
    const cause = (error as Error | undefined)?.cause;
    const refusal = error instanceof AppError ? error : cause instanceof AppError ? cause : null;
    const answer = (ctx as { refusal?: string | RefusalPage }).refusal;
    if (answer !== undefined && refusal) {
      const route = ctx as unknown as RefusalContext;
      const shown = typeof answer === "string" ? back(fill(answer, route.params), "error", refusalMessage(refusal)) : await answer(refusal, route);
      if (shown) return shown;
    }
    if (!wantsPage(request)) return undefined;
    if (code === "NOT_FOUND") {
      return errorPage(deps, request, 404, "Page not found", "There is nothing at this address: the link may be mistyped, or what it pointed at is gone.");
    }
    if (refusal && refusal.status < 500) {
      return errorPage(deps, request, refusal.status, TITLES[refusal.status] ?? TITLES[400]!, refusalMessage(refusal), refusal.headers);
    }
    if (code === "VALIDATION" || code === "PARSE") {
      return errorPage(deps, request, 400, TITLES[400]!, "The request could not be read. Go back, reload the page and try again.");
    }
    console.error(JSON.stringify({ level: "error", msg: "unhandled error", error: String((error as Error)?.stack ?? error) }));
    return errorPage(
      deps,
      request,
      500,
      "Something went wrong on our side",
      "The error is logged for the operator. What you sent may not have been saved: go back and check before trying again.",
    );
  });
