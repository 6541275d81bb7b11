import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  raw: string;
}

/** Decodes the parts of a plain-text RFC 5322 message that nodemailer writes. */
export function parseMail(raw: string, envelope: { from: string; to: string[] }): ReceivedMail {
  const split = raw.indexOf("\r\n\r\n") >= 0 ? raw.indexOf("\r\n\r\n") : raw.indexOf("\n\n");
  const head = raw.slice(0, split).replace(/\r?\n[ \t]+/g, " ");
  let body = raw.slice(split).replace(/^\r?\n\r?\n/, "");
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, "im").exec(head)?.[1]?.trim() ?? "";
  const encoding = header("Content-Transfer-Encoding").toLowerCase();
  if (encoding === "quoted-printable") {
    body = Buffer.from(
      body.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/gi, (_, h) => String.fromCharCode(parseInt(h, 16))),
      "latin1",
    ).toString("utf8");
  } else if (encoding === "base64") {
    body = Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8");
  }
  // Encoded-word subjects (=?UTF-8?Q?…?= or =?UTF-8?B?…?=).
  const subject = header("Subject").replace(/=\?utf-8\?([bq])\?([^?]*)\?=\s*/gi, (_, kind: string, data: string) =>
    kind.toLowerCase() === "b"
      ? Buffer.from(data, "base64").toString("utf8")
      : Buffer.from(data.replace(/_/g, " ").replace(/=([0-9A-F]{2})/gi, (_m, h) => String.fromCharCode(parseInt(h, 16))), "latin1").toString("utf8"),
  );
  return { ...envelope, subject, text: body.replace(/\r\n/g, "\n"), raw };
}

/**
 * A real SMTP server on loopback (the smtp-server package). `refuse` makes the first N messages
 * fail with a temporary error, as a flaky relay would.
 */
export async function smtpServer(opts: { refuse?: number } = {}) {
  const mails: ReceivedMail[] = [];
  let refused = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        if (refused < (opts.refuse ?? 0)) {
          refused++;
          const err = Object.assign(new Error("try again later"), { responseCode: 451 });
          return callback(err);
        }
        const raw = Buffer.concat(chunks).toString("utf8");
        mails.push(
          parseMail(raw, {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((r) => r.address),
          }),
        );
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  return {
    mails,
    refusedCount: () => refused,
    url: `smtp://127.0.0.1:${port}`,
    /** Resolves once `count` mails arrived, bounded by `ms`. */
    async waitFor(count: number, ms = 5000) {
      const deadline = Date.now() + ms;
      while (mails.length < count) {
        if (Date.now() > deadline) throw new Error(`got ${mails.length} of ${count} mails in ${ms} ms`);
        await Bun.sleep(10);
      }
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
