// subscriptions/listen on the hosted endpoint (revision 2026-07-28): one POST whose answer is an
// event stream of `notifications/resources/updated`, served by whichever instance the request
// reached. The streams it names wake it on this instance's commits at once and on other
// instances' within 2 s (the followers' look for other writers runs while a follow is open, and
// the listen is one): no session, nothing shared but the database.
import { createMcpHandler, InMemoryServerEventBus, type JSONRPCRequest, type McpServer, type ServerEventBus } from "@modelcontextprotocol/server";
import type { Ctx } from "../deps";
import { followers } from "../modules/streams/follow";
import type { NotesBackend } from "./backend";
import { followListen } from "./listen";

/**
 * Answers a listen request: a follow slot of the token (429 when it holds none: a listen costs
 * what a follow of the lines does), the streams it names followed, then the SDK's listen stream
 * with the filter narrowed to them. The listen ends when the client goes, at shutdown, and once
 * the token no longer authenticates (checked at every heartbeat): those end it as a dropped
 * connection, so the client listens again (elsewhere, or with a refreshed token).
 */
export async function serveListen(
  ctx: Ctx,
  backend: NotesBackend,
  factory: () => McpServer,
  request: Request,
  body: JSONRPCRequest,
  stillAllowed: () => Promise<unknown>,
): Promise<Response> {
  const { deps, principal } = ctx;
  const registry = followers(deps);
  const dropped = new AbortController();
  const release = registry.hold({ key: `token:${principal.tokenId}`, workspaceId: principal.workspaceId, signal: request.signal, stillAllowed }, () => dropped.abort());
  const events = new InMemoryServerEventBus();
  const { message, subscriptions } = await followListen(backend, body, (uri) => events.publish({ kind: "resource_updated", uri }));
  let streaming = false;
  const end = () => {
    release();
    subscriptions.close();
  };
  // The stream's end is when the SDK lets go of the bus: the client went, or the listen was dropped.
  const bus: ServerEventBus = {
    publish: (event) => events.publish(event),
    subscribe: (listener) => {
      streaming = true;
      const off = events.subscribe(listener);
      return () => {
        off();
        end();
      };
    },
  };
  if (registry.closing || request.signal.aborted) dropped.abort();
  const forwarded = new Request(request.url, { method: "POST", headers: request.headers, signal: dropped.signal });
  const res = await createMcpHandler(factory, { legacy: "reject", bus, maxSubscriptions: 1, keepAliveMs: registry.heartbeatMs }).fetch(forwarded, { parsedBody: message });
  if (!streaming) end(); // refused before any stream opened (a bad envelope, a revision not served)
  return res;
}
