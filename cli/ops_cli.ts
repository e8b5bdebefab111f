/**
 * Runs an operator operation (actors/ops/op.ts) from shell arguments: `positionals` from bare arguments, every other
 * input field from `--kebab-case` flags (booleans as bare flags), `--json` to print the result itself, `--by` to name
 * who acts in the audit log (default: the OS user). The input is checked by the operation's own schema, exactly as
 * the admin API checks it.
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import type { AnyOp, OpContext } from "../actors/ops/op.ts";

export class OpUsageError extends Error {}

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

function isBooleanField(schema: z.ZodType): boolean {
  let s: z.ZodType = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodDefault) s = s.unwrap() as z.ZodType;
  return s instanceof z.ZodBoolean;
}

/** The usage line of an operation: `chain pause <chain> [--reason <reason>]`. */
export function opUsage(op: AnyOp): string {
  const shape = op.input.shape as Record<string, z.ZodType>;
  const positionals = op.positionals ?? [];
  const parts = [op.name, ...positionals.map((p) => `<${p}>`)];
  for (const [field, schema] of Object.entries(shape)) {
    if (positionals.includes(field)) continue;
    const flag = isBooleanField(schema) ? `--${kebab(field)}` : `--${kebab(field)} <${field}>`;
    parts.push(schema.safeParse(undefined).success ? `[${flag}]` : flag);
  }
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
  const positionals = op.positionals ?? [];
  const names = result.error.issues.map((i) => {
    const field = String(i.path[0] ?? "");
    const shown = positionals.includes(field) ? `<${field}>` : `--${kebab(field)}`;
    return `${field ? `${shown}: ` : ""}${i.message}`;
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
  const result = await op.run(context(by), data);
  if (json) out(JSON.stringify(result, null, 2));
  else for (const line of op.text(result)) out(line);
}
