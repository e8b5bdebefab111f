/**
 * Operator operations (docs/admin-api.md): every action and report an operator has, declared once and served twice, by
 * the CLI (`deno task admin <words>`, cli/ops_cli.ts) and by the admin API (`/admin/...`, routes/admin.ts), with one
 * input schema, one implementation and one output schema. Nothing an operator does has a second code path.
 *
 * - `name`: the CLI words (`audit`, `chain pause`); `positionals` are the input fields read from bare arguments,
 *   every other field is a `--kebab-case` flag.
 * - `http`: the API route (`GET` reads the input from the query, `POST` from the JSON body; `{field}` in the path
 *   from the path), or null for a CLI-only operation (operator keys, which only the shell creates).
 * - `scope`: the one operator-key scope the API requires (kv/operator_keys.ts); the CLI, which opens the KV file
 *   itself, needs none.
 * - `run` changes state only through atomics that append their audit entry with `ctx.by` (kv/audit.ts), and throws
 *   `OpError` for a refusal: the API answers its status with the envelope, the CLI prints it and exits 2.
 * - Inputs are strings (amounts and numbers as decimal strings: never a float), enums and booleans, so the query, the
 *   JSON body and the shell all give them the same way. Outputs are JSON: bigints as decimal strings.
 */
import { z } from "zod";
import type { Chains } from "../../chains/adapter.ts";
import type { Config } from "../../config/env.ts";
import type { OperatorScope } from "../../kv/operator_keys.ts";
import type { PipelineSettings } from "../context.ts";

export interface OpContext {
  kv: Deno.Kv;
  config: Config;
  /** Who acts, for the audit log: the operator key's `name (keyId)` (API), or `--by` / the OS user (CLI). */
  by: string;
  via: "api" | "cli";
  now(): Date;
  /** The chains as this process runs them (the server's pipeline), or built from the configuration (the CLI). */
  chains(): Promise<Chains>;
  /** The pipeline's rules (confirmations, fees) as the server runs them. */
  settings(): PipelineSettings;
  /** The shared uAsset transfer address (spec 2.3). */
  transferAddress(): Promise<string>;
  /**
   * The `kid` of the JWT key this process signs with (the server's, or the CLI's from the same configuration), or null
   * where the configuration holds none (`ROLE=worker`, docs/operations.md "Roles").
   */
  signingKid(): Promise<string | null>;
}

/** A refusal: nothing was changed. The API answers `status` with `message`; the CLI prints it and exits 2. */
export class OpError extends Error {
  constructor(readonly status: 400 | 404 | 409 | 503, message: string) {
    super(message);
    this.name = "OpError";
  }
}

export interface OpHttp {
  method: "get" | "post";
  /** Under `/admin`, OpenAPI style: `/orders/{id}/cancel`. */
  path: string;
}

export interface Op<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> {
  name: string;
  summary: string;
  scope: OperatorScope;
  http: OpHttp | null;
  input: I;
  output: O;
  positionals?: readonly (keyof z.infer<I> & string)[];
  run(ctx: OpContext, input: z.infer<I>): Promise<z.infer<O>>;
  /** The CLI's lines for a result (`--json` prints the result itself). */
  text(result: z.infer<O>): string[];
}

// deno-lint-ignore no-explicit-any
export type AnyOp = Op<any, any>;

export function defineOp<I extends z.ZodObject, O extends z.ZodType>(op: Op<I, O>): Op<I, O> {
  return op;
}

/** A whole number as a decimal string (amounts in smallest units, block numbers): never a float. */
export function digits(description: string) {
  return z.string().regex(/^\d{1,78}$/, "Must be a whole number in decimal digits").describe(description);
}

/** The `{field}` names of an operation's path. */
export function pathParams(op: AnyOp): string[] {
  return [...(op.http?.path ?? "").matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
}
