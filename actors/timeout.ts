/** Bounded waits on chain reads for reports (metrics, the operators' chain overview): one rule, one message. */

/** `p`'s value, or a rejection naming `what` when it takes longer than `ms` (the timer is cleared either way). */
export async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
