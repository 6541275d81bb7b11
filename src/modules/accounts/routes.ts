import { Elysia } from "elysia";
import type { AnyAuth } from "../../http/plugins/auth";
import { describeAccount } from "./service";

export const accountRoutes = (auth: AnyAuth) =>
  new Elysia().use(auth).get(
    "/account",
    ({ ctx }) => describeAccount({ ctx }),
    { detail: { tags: ["account"], summary: "Plan, state, usage and caps of the token's workspace" } },
  );
