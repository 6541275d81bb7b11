import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Transporter } from "nodemailer";

// nodemailer loads with the first mail, not at start-up.
const nodemailer = async () => (await import("nodemailer")).default;
import { logEvent } from "../http/log";
import { randomBase62 } from "../lib/random";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Everything that sends mail goes through this; jobs call it, so a failure is retried, never lost. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** Sends through an SMTP server (smtp:// or smtps://, credentials in the URL). */
export class SmtpMailer implements Mailer {
  private transport: Transporter | null = null;

  constructor(
    private readonly url: string,
    private readonly from: string,
  ) {}

  private async connect(): Promise<Transporter> {
    const u = new URL(this.url);
    const secure = u.protocol === "smtps:";
    return (await nodemailer()).createTransport({
      host: u.hostname.replace(/^\[|\]$/g, ""),
      port: u.port ? Number(u.port) : secure ? 465 : 587,
      secure,
      auth: u.username ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } : undefined,
      // A local relay without TLS is common on a homelab box; STARTTLS is still used when offered.
      ignoreTLS: u.searchParams.get("tls") === "off",
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
  }

  async send(m: MailMessage): Promise<void> {
    this.transport ??= await this.connect();
    await this.transport.sendMail({ from: this.from, to: m.to, subject: m.subject, text: m.text });
  }
}

/**
 * With no SMTP server configured, each mail becomes an .eml file under <data dir>/outbox/ and a
 * log line, so `make run` works with nothing set up and nothing is lost.
 */
export class OutboxMailer implements Mailer {
  private transport: Transporter | null = null;
  /** Mails written within one millisecond still list in the order they were sent. */
  private written = 0;

  constructor(
    private readonly dir: string,
    private readonly from: string,
  ) {}

  async send(m: MailMessage): Promise<void> {
    this.transport ??= (await nodemailer()).createTransport({ streamTransport: true, buffer: true, newline: "unix" });
    const info = await this.transport.sendMail({ from: this.from, to: m.to, subject: m.subject, text: m.text });
    mkdirSync(this.dir, { recursive: true });
    const seq = String(++this.written % 1_000_000).padStart(6, "0");
    const file = join(this.dir, `${new Date().toISOString().replace(/[:.]/g, "-")}-${seq}-${randomBase62(6)}.eml`);
    writeFileSync(file, info.message as Buffer);
    logEvent("info", "mail written to outbox", { to_domain: domainOf(m.to), file });
  }
}

/** The part after the last @ ("example.com"), or "unknown": what logs say of an address (the rest is personal data). */
export function domainOf(address: string): string {
  const at = address.lastIndexOf("@");
  return at === -1 ? "unknown" : address.slice(at + 1).replace(/[>\s].*$/, "").toLowerCase() || "unknown";
}
