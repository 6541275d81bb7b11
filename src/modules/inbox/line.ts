import { render } from "./template/compile";
import { oneLine, readPayload, summariseRead, templateRoot } from "./summarise";

/**
 * What follows the time stamp on a payload's line: the stream's template rendered on one line,
 * or, without a template or when it renders nothing, the built-in summary.
 */
export function payloadSummary(template: string | null, contentType: string | null, headers: Record<string, string>, raw: Uint8Array): string {
  const read = readPayload(contentType, raw);
  if (template) {
    const line = oneLine(render(template, templateRoot(read)));
    if (line) return line;
  }
  return summariseRead(read, headers, raw.length);
}
