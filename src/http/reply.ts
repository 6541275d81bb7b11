import { status } from "elysia";
import type { Reply } from "../db/commit";

/** Sends a write's reply with the status its service chose (201 for creates, 200 otherwise). */
export function send<T>(reply: Reply<T>) {
  return status(reply.status as 200, reply.body);
}
