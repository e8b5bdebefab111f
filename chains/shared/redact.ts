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

/**
 * The error an RPC client lets out (docs/partners.md "RPC URLs in errors"): `err` as is when none of its own
 * texts quotes a URL whole, else a copy of the same class with every own text (message, stack, viem's `details`,
 * `shortMessage`, `metaMessages`, `url`) redacted and `err` itself as its `cause`. Class, code and status stay, so
 * `instanceof`, viem's `walk` and the transient-error rules read it as before, and whoever stores or shows its
 * `message` or `String(err)` stores no key. The original is reachable through `cause` only: `formatError` redacts it,
 * and no error object is stored in KV (a structured clone keeps causes).
 */
export function redactedError<E>(err: E): E {
  if (!(err instanceof Error)) return err;
  const copy = Object.create(Object.getPrototypeOf(err)) as Error;
  let changed = false;
  const redact = (value: unknown): unknown => {
    if (typeof value === "string") {
      const clean = redactUrls(value);
      changed ||= clean !== value;
      return clean;
    }
    return Array.isArray(value) ? value.map(redact) : value;
  };
  for (const key of Reflect.ownKeys(err)) {
    if (key === "cause" || key === "stack") continue;
    const d = Object.getOwnPropertyDescriptor(err, key)!;
    Object.defineProperty(copy, key, "value" in d ? { ...d, value: redact(d.value) } : d);
  }
  const stack = redact(err.stack);
  if (!changed) return err;
  Object.defineProperty(copy, "stack", { value: stack, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(copy, "cause", { value: err, writable: true, configurable: true, enumerable: false });
  return copy as E;
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
