/**
 * The one rule for stored credential secrets (partner API keys and operator keys): `<keyId>.<secret>` with a 256-bit
 * secret, of which only SHA-256 is stored and compared in constant time (against a dummy hash when the id is
 * unknown, so timing does not tell which ids exist). A plain hash, no KDF: the secret is random, not a password.
 */
import { timingSafeEqual } from "node:crypto";
import { sha256 } from "@noble/hashes/sha2.js";
import { base64urlnopad, hex } from "@scure/base";

export function hashSecret(secret: string): string {
  return hex.encode(sha256(new TextEncoder().encode(secret)));
}

/** A new secret: 32 random bytes as 43 base64url characters. */
export function newSecret(): string {
  return base64urlnopad.encode(crypto.getRandomValues(new Uint8Array(32)));
}

/** A new key id: `prefix` + 16 hex characters. */
export function newKeyId(prefix: string): string {
  return `${prefix}${hex.encode(crypto.getRandomValues(new Uint8Array(8)))}`;
}

/** Whether `secret` hashes to `stored` (null: an unknown id, compared against a dummy all the same). */
export function secretMatches(secret: string, stored: string | null): boolean {
  // Both sides are 64 hex characters whatever the secret's length, so timingSafeEqual always compares.
  const presented = new TextEncoder().encode(hashSecret(secret));
  const against = new TextEncoder().encode(stored ?? "0".repeat(64));
  return timingSafeEqual(presented, against) && stored !== null;
}

/**
 * Splits `<keyId>.<secret>`: exactly two non-empty parts around one dot, or null.
 */
export function splitKey(value: string | undefined): { keyId: string; secret: string } | null {
  if (value === undefined) return null;
  const parts = value.trim().split(".");
  if (parts.length !== 2 || parts[0] === "" || parts[1] === "") return null;
  return { keyId: parts[0], secret: parts[1] };
}
