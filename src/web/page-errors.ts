import { Elysia } from "elysia";
import { AppError } from "../http/errors";
import { FormRefused, SignInRequired } from "./guard";
import { back, redirect } from "./layout";
import type { RefusalContext, RefusalPage } from "./macros";
import { refusalMessage } from "./refusal";

const fill = (path: string, params: Record<string, string>) => path.replace(/:(\w+)/g, (_, name: string) => params[name] ?? "");

/**
 * How pages answer what stops them: sign-in, a refused form, and a service's refusal (an
 * AppError) on routes that declared `refused` (macros.ts), whose resolve put it on the context.
 * It must be registered before the API's error handler: Elysia asks onError hooks in
 * registration order and takes the first answer. Anything else (an API route's error, a bug)
 * gets no answer here and falls through to the API's envelope.
 */
export const pageErrors = () =>
  new Elysia().onError({ as: "global" }, (ctx) => {
    const { error } = ctx;
    if (error instanceof SignInRequired) {
      return error.returnTo === null ? new Response(null, { status: 401 }) : redirect(`/signin?next=${encodeURIComponent(error.returnTo)}`);
    }
    if (error instanceof FormRefused) return new Response(error.message, { status: 403, headers: { "content-type": "text/plain; charset=utf-8" } });
    const answer = (ctx as { refusal?: string | RefusalPage }).refusal;
    if (answer === undefined || !(error instanceof AppError)) return undefined;
    const route = ctx as unknown as RefusalContext;
    return typeof answer === "string" ? back(fill(answer, route.params), "error", refusalMessage(error)) : answer(error, route);
  });
