import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { CSS, JS } from "./assets";
import { authPages } from "./auth-pages";
import { notePages } from "./note-pages";
import { settingsPages } from "./settings-pages";

/** The browser surface: server-rendered pages, one stylesheet, one small script. */
export const webRoutes = (deps: Deps) =>
  new Elysia()
    .get("/assets/app.css", () => new Response(CSS, { headers: { "content-type": "text/css; charset=utf-8", "cache-control": "public, max-age=3600" } }))
    .get("/assets/app.js", () => new Response(JS, { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=3600" } }))
    .use(authPages(deps))
    .use(notePages(deps))
    .use(settingsPages(deps));
