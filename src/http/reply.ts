import { status } from "elysia";

/** A write's answer: the HTTP status a route sends and the body. */
export interface Reply<T> {
  status: number;
  body: T;
}

/** Sends a write's reply with the status its service chose (201 for creates, 200 otherwise). */
export function send<T>(reply: Reply<T>) {
  return status(reply.status as 200, reply.body);
}
