import { Elysia } from "elysia";
import type { Deps } from "../deps";
import type { AppError } from "../http/errors";
import { requireForm, requirePublicForm, requireSession, SignInRequired } from "./guard";
import { loadSession, type WebSession } from "./session";

export interface RefusalContext {
  request: Request;
  params: Record<string, string>;
  body: unknown;
  /** On routes that declare a session. */
  s?: WebSession;
}

/** A page of its own for a refusal; undefined leaves the error to the API's handler (a JSON envelope). */
export type RefusalPage = (error: AppError, ctx: RefusalContext) => Response | undefined | Promise<Response | undefined>;

/**
 * What a page route declares, as route options:
 * - `session: "page"`: a signed-in page gets `s`; without a session, sign in and come back.
 *   `"form"`: a signed-in form post, its CSRF token and Origin checked (403 otherwise).
 *   `"script"`: a request of the page's own script; without a session, a bare 401.
 * - `publicForm: true`: a form posted before sign-in, its double-submit token and Origin checked.
 * - `refused`: where a refusal goes (see page-errors.ts): a path such as "/notes/:id", filled
 *   from the route's params, to go back to with the message shown; or a page of its own.
 */
export const pageMacros = (deps: Deps) =>
  new Elysia().macro({
    session: (need: "page" | "form" | "script") => ({
      resolve: async ({ request, body }) => {
        if (need === "form") return { s: await requireForm(deps, request, body) };
        if (need === "page") return { s: await requireSession(deps, request) };
        const s = await loadSession(deps, request);
        if (!s) throw new SignInRequired(null);
        return { s };
      },
    }),
    publicForm: {
      beforeHandle: ({ request, body }) => requirePublicForm(deps, request, body),
    },
    refused: (answer: string | RefusalPage) => ({
      resolve: () => ({ refusal: answer }),
    }),
  });
