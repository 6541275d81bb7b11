import type { MailMessage } from "./mailer";

/** Mail texts. Pure functions of their inputs, so they are tested as strings. */

function ago(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} seconds`;
  const m = Math.round(s / 60);
  if (m < 120) return `${m} minutes`;
  const h = Math.round(m / 60);
  return h < 48 ? `${h} hours` : `${Math.round(h / 24)} days`;
}

export function deadmanAlert(a: {
  to: string;
  noteTitle: string;
  filename: string | null;
  noteId: string;
  lastWriteAt: string;
  silentForMs: number;
  intervalSeconds: number;
  lastLines: string[];
  baseUrl: string;
}): MailMessage {
  const name = a.filename ?? a.noteTitle;
  return {
    to: a.to,
    subject: `[notestream] ${name} has gone quiet`,
    text: [
      `No write has reached "${name}" for ${ago(a.silentForMs)} (expected at least every ${ago(a.intervalSeconds * 1000)}).`,
      "",
      `Last heard from: ${a.lastWriteAt}`,
      `Note: ${a.baseUrl}/api/v1/notes/${a.noteId}`,
      "",
      a.lastLines.length ? "Its last lines:" : "It has no lines yet.",
      ...a.lastLines.map((l) => `  ${l}`),
      "",
      "You will get one more mail when writes resume.",
    ].join("\n"),
  };
}

export function deadmanRecovered(a: { to: string; noteTitle: string; filename: string | null; resumedAt: string; line: string }): MailMessage {
  const name = a.filename ?? a.noteTitle;
  return {
    to: a.to,
    subject: `[notestream] ${name} is writing again`,
    text: [`"${name}" received a write again at ${a.resumedAt}:`, "", `  ${a.line}`].join("\n"),
  };
}

export function exportReady(a: { to: string; url: string; apiUrl: string; expiresAt: string; notes: number; sizeBytes: number }): MailMessage {
  return {
    to: a.to,
    subject: "[notestream] your export is ready",
    text: [
      `Your export of ${a.notes} notes (${(a.sizeBytes / 1024).toFixed(1)} KB, zip) is ready. Download it while signed in:`,
      "",
      `  ${a.url}`,
      "",
      "or with a read token of the workspace (Authorization: Bearer):",
      "",
      `  ${a.apiUrl}`,
      "",
      `Both work until ${a.expiresAt}; after that the file is deleted.`,
    ].join("\n"),
  };
}

export function webhookDisabled(a: { to: string; noteTitle: string; filename: string | null; url: string; reason: string }): MailMessage {
  const name = a.filename ?? a.noteTitle;
  return {
    to: a.to,
    subject: `[notestream] the webhook of ${name} was disabled`,
    text: [
      `Deliveries to ${a.url} kept failing, so the webhook of "${name}" was disabled: ${a.reason}.`,
      "",
      "Fix the receiver, then save the note (any PATCH) to re-arm it. The deliveries log shows each attempt.",
    ].join("\n"),
  };
}
