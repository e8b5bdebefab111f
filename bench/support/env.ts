/** Benchmark knobs from the environment, each refused with its variable's name when it is not what it must be. */

/** A positive number (fractions allowed), or `fallback` when unset. */
export const positiveNumberEnv = (name: string, fallback: number) => {
  const n = Number(Deno.env.get(name) ?? fallback);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number`);
  return n;
};

/** A positive whole number, or `fallback` when unset. */
export const positiveIntEnv = (name: string, fallback: number) => {
  const n = Number(Deno.env.get(name) ?? fallback);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`);
  return n;
};
