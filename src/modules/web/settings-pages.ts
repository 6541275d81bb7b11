import { Elysia } from "elysia";
import type { Deps } from "../../deps";

export const settingsPages = (_deps: Deps) => new Elysia();
