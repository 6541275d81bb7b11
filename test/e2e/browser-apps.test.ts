/**
 * Connected apps, in Chromium: an AI client allowed on the consent page (its code delivered to a
 * loopback listener on a port it picked, registered without one), then listed on the account's
 * Connected apps page with its unverified name, where its access goes, what it may do and when it
 * was last used, and revoked there.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { hasChromium, startWebApp, type WebApp } from "../helpers/browser";

let web: WebApp;

beforeAll(async () => {
  if (!hasChromium) return;
  web = await startWebApp();
}, 60_000);

afterAll(async () => {
  if (hasChromium) await web?.close();
});

/** An initialize at /mcp with the access token: the status says whether the grant stands. */
async function mcpStatus(access: string): Promise<number> {
  const res = await fetch(`${web.base}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${access}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "apps-test", version: "1" } } }),
  });
  await res.body?.cancel();
  return res.status;
}

describe.skipIf(!hasChromium)("Connected apps", () => {
  test("allow a client in the browser, see it listed (unverified name, where its access goes, scopes, last use), revoke it there", async () => {
    const { page } = await web.signedInPage({ plan: "dev" });
    const registered = await fetch(`${web.base}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Claude Desktop", redirect_uris: ["http://127.0.0.1/callback"], token_endpoint_auth_method: "client_secret_post" }),
    });
    expect(registered.status).toBe(201);
    const client = (await registered.json()) as { client_id: string };

    // The client's own listener, on whatever port the system gives it.
    let delivered: URLSearchParams | null = null;
    const listener = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (r) => {
        // Chromium asks for /favicon.ico as well.
        if (new URL(r.url).pathname === "/callback") delivered = new URL(r.url).searchParams;
        return new Response("Signed in: you can close this window.");
      },
    });
    try {
      const redirect = `http://127.0.0.1:${listener.port}/callback`;
      const verifier = randomBytes(32).toString("base64url");
      const authorize = new URL(`${web.base}/oauth/authorize`);
      for (const [k, v] of Object.entries({
        response_type: "code",
        client_id: client.client_id,
        redirect_uri: redirect,
        code_challenge: createHash("sha256").update(verifier).digest("base64url"),
        code_challenge_method: "S256",
        scope: "notes:read notes:write offline_access",
        state: "browser",
        resource: `${web.base}/mcp`,
      }))
        authorize.searchParams.set(k, v);

      await page.goto(authorize.href);
      await page.getByText("(unverified name)").first().waitFor();
      await page.getByRole("button", { name: "Allow" }).click();
      await page.getByText("Signed in: you can close this window.").waitFor();
      expect(delivered!.get("state")).toBe("browser");
      const exchanged = await fetch(`${web.base}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "authorization_code", code: delivered!.get("code")!, code_verifier: verifier, client_id: client.client_id, redirect_uri: redirect, resource: `${web.base}/mcp` }).toString(),
      });
      expect(exchanged.status).toBe(200);
      const tokens = (await exchanged.json()) as { access_token: string; scope: string };
      expect(tokens.scope).toBe("notes:read notes:write");

      // From the account page to Connected apps.
      await page.goto(`${web.base}/settings`);
      await page.getByRole("link", { name: "Connected apps" }).click();
      await page.waitForURL(`${web.base}/settings/apps`);
      const row = page.locator("table.apps tr", { hasText: "Claude Desktop" });
      await expect(row.textContent()).resolves.toContain("(unverified name)");
      const cells = await row.locator("td").allTextContents();
      expect(cells[1]).toBe("an app on this computer");
      expect(cells[2]).toContain("read your notes and folders");
      expect(cells[2]).toContain("create, edit, append to, move and delete your notes and folders");
      expect(cells[4]).toBe("never");

      // Used through /mcp: the page shows when.
      expect(await mcpStatus(tokens.access_token)).toBe(200);
      await web.deps.writer.idle();
      await page.reload();
      const lastUsed = await page.locator("table.apps tr", { hasText: "Claude Desktop" }).locator("td").nth(4).textContent();
      expect(lastUsed).not.toBe("never");
      expect(lastUsed).toMatch(/\d{4}-\d{2}-\d{2}|ago|now/);

      await page.getByRole("button", { name: "Revoke Claude Desktop" }).click();
      await page.getByText("Claude Desktop no longer has access").waitFor();
      await page.getByText("No app has access.").waitFor();
      expect(await mcpStatus(tokens.access_token)).toBe(401);
      expect(web.violations).toEqual([]);
    } finally {
      listener.stop(true);
    }
  }, 60_000);
});
