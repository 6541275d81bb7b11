/**
 * The Rules card of a stream's settings page: its form saves the rows in order, leaves out empty
 * and removed ones, and a refused rule comes back in place with what was typed.
 */
import { afterEach, expect, test } from "bun:test";
import { fieldMessage, inputNamed, sessionBrowser } from "../helpers/form-browser";
import { harness, type Harness } from "../helpers/harness";

let h: Harness;
afterEach(async () => {
  await h.close();
});

test("the rules form saves rows in order, refuses a bad regex beside its row with the text kept, and removes a marked rule", async () => {
  h = await harness();
  const token = await h.token(await h.account("dev", "owner@example.com"), ["read", "write"]);
  const id = (await (await h.request("POST", "/api/v1/notes/by-filename/app.log/append", { token, body: { text: "started" } })).json()).id;
  const b = await sessionBrowser(h, "owner@example.com");
  const rules = async () => (await (await h.request("GET", `/api/v1/notes/${id}`, { token })).json()).rules;
  const form = (fields: Record<string, string>) => b.form(`/notes/${id}/rules`, { _csrf: b.csrf, ...fields });

  const empty = await b.get(`/notes/${id}/settings`);
  expect(empty.text).toContain("Rules on lines");
  expect(inputNamed(empty.text, "match_0")).toContain('value=""');

  const refused = await form({ match_0: "ERROR", then_0: "fail", match_1: "(a", regex_1: "yes", then_1: "alert", match_2: "", then_2: "ok" });
  expect(refused.status).toBe(422);
  expect(fieldMessage(refused.text, "match_1")).toEqual({ invalid: true, message: "Not a regular expression RE2 accepts: error parsing regexp: missing closing ): `(a`." });
  expect(inputNamed(refused.text, "match_1")).toContain('value="(a"');
  expect(inputNamed(refused.text, "match_0")).toContain('value="ERROR"');
  expect(await rules()).toEqual([]);

  const saved = await form({ match_0: "ERROR", then_0: "fail", match_1: "^done$", regex_1: "yes", case_1: "yes", then_1: "ok", match_2: "", then_2: "alert" });
  expect(saved.status).toBe(303);
  expect(await rules()).toEqual([
    { match: "ERROR", regex: false, case_sensitive: false, then: "fail" },
    { match: "^done$", regex: true, case_sensitive: true, then: "ok" },
  ]);
  const page = await b.get(`/notes/${id}/settings`);
  expect(inputNamed(page.text, "match_1")).toContain('value="^done$"');
  expect(inputNamed(page.text, "case_1")).toContain("checked");
  expect(inputNamed(page.text, "match_2")).toContain('value=""');

  expect((await form({ match_0: "ERROR", then_0: "fail", remove_0: "yes", match_1: "^done$", regex_1: "yes", then_1: "ok" })).status).toBe(303);
  expect(await rules()).toEqual([{ match: "^done$", regex: true, case_sensitive: false, then: "ok" }]);
});
