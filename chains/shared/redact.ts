/**
 * The one place that keeps secrets in URLs out of logs. RPC providers put API keys in the path or query of their
 * URLs (`https://x.example/v2/KEY`), and libraries such as viem quote the URL in error messages, details and causes:
 * every logged text and error goes through here and keeps only the URLs' origins.
 */

/** Replaces every URL in `text` by its origin (scheme, host, port): no path, query, fragment or credentials. */
export function redactUrls(text: string): string {
  return text.replace(/(https?|wss?):\/\/[^\s/?#)"'`<>]+[^\s)"'`<>]*/g, (match) => {
    // Punctuation right after a URL ("http://host:8332: refused", "see http://host.") is the sentence's, not the
    // URL's: without this the whole URL became "<url>" and an operator could not tell which node failed.
    const url = match.replace(/[:.,;]+$/, "");
    try {
      return new URL(url).origin + match.slice(url.length);
    } catch {
      return "<url>";
    }
  });
}

/** How many causes deep an error is rendered; cause chains can be cycles. */
const MAX_CAUSES = 8;

/** Renders an error for a log, redacted: name and message, stack frames, then each cause in turn. */
export function formatError(err: unknown): string {
  const parts = [describe(err)];
  const seen = new Set<unknown>([err]);
  for (let e = causeOf(err); e != null && !seen.has(e) && parts.length <= MAX_CAUSES; e = causeOf(e)) {
    seen.add(e);
    parts.push(`caused by ${describe(e)}`);
  }
  return redactUrls(parts.join("\n"));
}

const causeOf = (e: unknown): unknown => (e instanceof Error ? e.cause : undefined);

function describe(e: unknown): string {
  if (!(e instanceof Error)) return typeof e === "string" ? e : Deno.inspect(e, { colors: false, depth: 4 });
  // The stack's first lines repeat the message as it was at construction; the current message is the one to show.
  const frames = (e.stack ?? "").split("\n").filter((line) => /^\s+at /.test(line));
  return [`${e.name}: ${e.message}`, ...frames].join("\n");
}

export type Log = (msg: string, err?: unknown) => void;

/** A log whose every line is redacted: notes go to `out.log`, failures with their rendered error to `out.error`. */
export function redactedLog(out: Pick<Console, "log" | "error"> = console): Log {
  return (msg, err) =>
    err === undefined ? out.log(redactUrls(msg)) : out.error(`${redactUrls(msg)}: ${formatError(err)}`);
}
