import { expect, test } from "bun:test";
import { Notestream, NotestreamError } from "../../clients/js/src/index";

/** A fetch that answers from a list, recording each request. */
function answering(...answers: (() => Response)[]) {
  const calls: string[] = [];
  const f = async (input: string) => {
    calls.push(input);
    return answers[Math.min(calls.length, answers.length) - 1]!();
  };
  return { f, calls };
}

const limited = () => Response.json({ error: { code: "rate_limited", message: "slow down", details: null } }, { status: 429, headers: { "retry-after": "0" } });
const ok = () => Response.json({ id: "note_x", filename: "a.log", created: false });

test("a 429 is retried after its Retry-After, three times at most, then thrown with retryAfter", async () => {
  const twice = answering(limited, limited, ok);
  const ns = new Notestream({ url: "http://notestream.test/", token: "nst_x", fetch: twice.f });
  expect(await ns.append("a.log", "x")).toMatchObject({ id: "note_x" });
  expect(twice.calls).toEqual(Array(3).fill("http://notestream.test/api/v1/notes/by-filename/a.log/append"));

  const always = answering(limited);
  const refused = await new Notestream({ url: "http://notestream.test", token: "nst_x", fetch: always.f }).append("a.log", "x").catch((e) => e);
  expect(refused).toBeInstanceOf(NotestreamError);
  expect(refused).toMatchObject({ status: 429, code: "rate_limited", retryAfter: 0 });
  expect(always.calls).toHaveLength(4);
});

test("a network failure is a NotestreamError too", async () => {
  const down = async (): Promise<Response> => {
    throw new TypeError("fetch failed");
  };
  const e = await new Notestream({ url: "http://127.0.0.1:1", token: "t", fetch: down }).lines("a.log").catch((x) => x);
  expect(e).toMatchObject({ status: 0, code: "network_error" });
});
