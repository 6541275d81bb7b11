// The Digests section's forms (digests-view.ts, on the Channels page): add a digest, send one now,
// delete one; each answered with a redirect to the Channels page, or the page again with the
// refused form's problems in place.
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import type { AppError } from "../../http/errors";
import { redirectWithFlash } from "../../web/flash";
import { pageMacros } from "../../web/macros";
import { MAX_DIGEST_LINES, MAX_DIGEST_STREAMS, type DigestInput } from "../digests/model";
import { createDigest, deleteDigest, sendDigestNow } from "../digests/service";
import { refusedOn } from "./channel-pages";
import { CHANNELS } from "./channels-view";
import { DIGEST_ADD, DIGEST_ROW, DIGESTS, TO_EMAIL } from "./digests-view";
import { fieldProblems, firstValue, formFields, type FormBody } from "./form";
import { limit } from "./limits";
import { FORM_FIELD, sentence, WHOLE_FORM } from "./settings-forms";

/** The service's refusals of a digest, said beside the add form's field they are about. */
function explain(e: AppError): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const p of fieldProblems(e)) {
    if (p.code === FORM_FIELD) {
      errors[p.field] = p.message;
      continue;
    }
    switch (p.field) {
      case "digest.schedule":
        errors.schedule = sentence(p.message.replace(/^schedule /, "This schedule "));
        break;
      case "digest.timezone":
        errors.timezone = "Enter an IANA time zone name, such as Europe/Berlin or America/New_York.";
        break;
      case "digest.channel_id":
        if (p.code === "required") errors.email = "Enter the address to mail it to, or choose a channel.";
        else errors.to = "That channel is no longer in this workspace: choose another.";
        break;
      case "digest.email":
        errors.email = "Enter an e-mail address.";
        break;
      case "digest.streams":
        errors.streams = `List 1 to ${MAX_DIGEST_STREAMS} filenames, or choose all streams.`;
        break;
      case "digest.last_lines":
        errors.last_lines = `Enter a whole number from 0 to ${MAX_DIGEST_LINES}.`;
        break;
      default:
        errors[WHOLE_FORM] = sentence(p.message);
    }
  }
  if (Object.keys(errors).length) return errors;
  if (e.code === "not_found") return { [WHOLE_FORM]: "That digest is not in this workspace (any more)." };
  return { [WHOLE_FORM]: sentence(e.message) };
}

/** The add form as the service's input: one destination, "all" or the filenames listed, the number typed (the service judges it). */
function digestInput(b: FormBody): DigestInput {
  const to = firstValue(b.to);
  const lines = firstValue(b.last_lines).trim();
  const listed = firstValue(b.streams).split(/[,\n]/).map((f) => f.trim()).filter(Boolean);
  return {
    schedule: firstValue(b.schedule).trim(),
    timezone: firstValue(b.timezone).trim() || "UTC",
    ...(to === TO_EMAIL ? { email: firstValue(b.email).trim() || null } : { channel_id: to }),
    streams: firstValue(b.scope) === "list" ? listed : "all",
    last_lines: lines === "" ? undefined : Number(lines),
  };
}

export const digestPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .post(
      DIGESTS,
      async ({ s, body }) => {
        await createDigest({ ctx: s.ctx, input: digestInput(formFields(body)) });
        return redirectWithFlash(deps, s, CHANNELS, { ok: "Digest added: the first one covers what happens from now." });
      },
      { session: "form", refused: refusedOn(deps, () => DIGEST_ADD, explain) },
    )
    .post(
      `${DIGESTS}/:id/send`,
      async ({ s, params }) => {
        await limit(deps, "testDeliveriesPerAccount", s.account.id, "At most 10 sends in 10 minutes.");
        await sendDigestNow({ ctx: s.ctx, id: params.id });
        return redirectWithFlash(deps, s, CHANNELS, { ok: "Digest sent: it arrives in a moment, and the next scheduled one counts from now." });
      },
      { session: "form", refused: refusedOn(deps, () => DIGEST_ROW, explain) },
    )
    .post(
      `${DIGESTS}/:id/delete`,
      async ({ s, params }) => {
        await deleteDigest({ ctx: s.ctx, id: params.id });
        return redirectWithFlash(deps, s, CHANNELS, { ok: "Digest deleted." });
      },
      { session: "form", refused: refusedOn(deps, () => DIGEST_ROW, explain) },
    );
