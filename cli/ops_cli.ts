/**
 * Runs an operator operation (actors/ops/op.ts) from shell arguments: `positionals` from bare arguments, every other
 * input field from `--kebab-case` flags (booleans as bare flags), `--json` to print the result itself, `--by` to name
 * who acts in the audit log (default: the OS user). The input is checked by the operation's own schema, exactly as
 * the admin API checks it, and a refusal names the flag or argument: a schema message written as the rest of a
 * sentence (`must be one of doge, zec`) follows the name (`--chain must be one of doge, zec`), any other follows it
 * after a colon, and one that starts with the value it refuses (`0x12 is not an EVM address`) stands alone; a flag or
 * argument not given at all, where zod would only say its type, reads `is required`.
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import type { AnyOp, OpContext } from "../actors/ops/op.ts";
import { InvalidRecordError } from "../actors/ops/errors.ts";

export class OpUsageError extends Error {}

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

function isBooleanField(schema: z.ZodType): boolean {
  let s: z.ZodType = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodDefault) s = s.unwrap() as z.ZodType;
  return s instanceof z.ZodBoolean;
}

/** The values a field takes, when it is an enum (shown in the usage as `<doge|zec>`). */
function enumValues(schema: z.ZodType): string[] | undefined {
  let s: z.ZodType = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodDefault) s = s.unwrap() as z.ZodType;
  return s instanceof z.ZodEnum ? (s.options as string[]) : undefined;
}

/** Whether an operation changes something (a POST route; shell-only ones other than lists): `--by` names who. */
function changes(op: AnyOp): boolean {
  return op.http ? op.http.method === "post" : !op.name.endsWith(" list");
}

/**
 * The usage line of an operation: `chain pause <chain> [--reason <reason>] [--by <operator>]`: an enum's values as
 * `<a|b>`, a number as `<N>`, `--by` for every operation that changes something. Every operation takes `--json`.
 */
export function opUsage(op: AnyOp): string {
  const shape = op.input.shape as Record<string, z.ZodType>;
  const positionals = op.positionals ?? [];
  const parts = [op.name, ...positionals.map((p) => `<${p}>`)];
  for (const [field, schema] of Object.entries(shape)) {
    if (positionals.includes(field)) continue;
    const values = enumValues(schema);
    // A field that takes "1" and refuses "x" is a number in decimal digits.
    const placeholder = values
      ? values.join("|")
      : schema.safeParse("1").success && !schema.safeParse("x").success
      ? "N"
      : field;
    const flag = isBooleanField(schema) ? `--${kebab(field)}` : `--${kebab(field)} <${placeholder}>`;
    parts.push(schema.safeParse(undefined).success ? `[${flag}]` : flag);
  }
  if (changes(op) && !("by" in shape)) parts.push("[--by <operator>]");
  return parts.join(" ");
}

/** Parses `args` into the operation's input; throws OpUsageError naming the flag for anything refused. */
export function parseOpArgs(op: AnyOp, args: string[]): { input: unknown; json: boolean; by?: string } {
  const shape = op.input.shape as Record<string, z.ZodType>;
  const positionals = op.positionals ?? [];
  const options: Record<string, { type: "string" | "boolean" }> = { json: { type: "boolean" } };
  const flagOf = new Map<string, string>();
  for (const [field, schema] of Object.entries(shape)) {
    if (positionals.includes(field)) continue;
    options[kebab(field)] = { type: isBooleanField(schema) ? "boolean" : "string" };
    flagOf.set(kebab(field), field);
  }
  if (!("by" in shape)) options.by = { type: "string" };
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: positionals.length > 0, strict: true });
  } catch (e) {
    throw new OpUsageError(e instanceof Error ? e.message : String(e));
  }
  if (parsed.positionals.length > positionals.length) {
    throw new OpUsageError(`too many arguments: expected ${positionals.map((p) => `<${p}>`).join(" ") || "none"}`);
  }
  const input: Record<string, unknown> = {};
  positionals.forEach((field, i) => {
    if (parsed.positionals[i] !== undefined) input[field] = parsed.positionals[i];
  });
  for (const [flag, value] of Object.entries(parsed.values)) {
    const field = flagOf.get(flag);
    if (field !== undefined) input[field] = value;
  }
  const by = "by" in shape ? undefined : (parsed.values.by as string | undefined)?.trim() || undefined;
  return { input, json: parsed.values.json === true, by };
}

/** Checks the input against the operation's schema, naming each refused field as the shell gives it. */
export function checkOpInput(op: AnyOp, input: unknown): unknown {
  const result = (op.input as z.ZodType).safeParse(input);
  if (result.success) return result.data;
  const given = (input ?? {}) as Record<string, unknown>;
  const positionals = op.positionals ?? [];
  const names = result.error.issues.map((i) => {
    const field = String(i.path[0] ?? "");
    if (!field) return i.message;
    const shown = positionals.includes(field) ? `<${field}>` : `--${kebab(field)}`;
    // zod's own words for a missing value name its type; the shell's are that it is required.
    const missing = given[field] === undefined && i.code === "invalid_type" && i.message.startsWith("Invalid input");
    const message = missing ? "is required" : i.message;
    // A message that quotes the value it refuses (`0x12 is not an EVM address`) says all by itself.
    const value = given[field];
    if (typeof value === "string" && value !== "" && message.startsWith(value)) return message;
    return /^[a-z]/.test(message) ? `${shown} ${message}` : `${shown}: ${message}`;
  });
  throw new OpUsageError(names.join("; "));
}

/** Runs `op` with shell arguments; lines go to `out`. Refusals throw OpUsageError or OpError (exit 2). */
export async function runOpFromArgs(
  op: AnyOp,
  args: string[],
  context: (by: string | undefined) => OpContext,
  out: (line: string) => void,
): Promise<void> {
  const { input, json, by } = parseOpArgs(op, args);
  const data = checkOpInput(op, input);
  let result;
  try {
    result = await op.run(context(by), data);
  } catch (e) {
    // A record that fails its schema is shown as stored (stdout), then refused (stderr, exit 2).
    if (e instanceof InvalidRecordError) out(JSON.stringify(e.record, null, 2));
    throw e;
  }
  if (json) out(JSON.stringify(result, null, 2));
  else for (const line of op.text(result)) out(line);
}
