/** Refusals beyond a plain `OpError` (actors/ops/op.ts). */
import { OpError } from "./op.ts";

/**
 * A stored record that fails its schema (kv/orders.ts `getOrder`'s `invalid`): refused with 409 and its problem, never
 * changed on a guess. The CLI prints the record as stored on stdout before the error, so an operator can repair it;
 * the API answers the problem alone.
 */
export class InvalidRecordError extends OpError {
  constructor(message: string, readonly record: unknown) {
    super(409, message);
    this.name = "InvalidRecordError";
  }
}
