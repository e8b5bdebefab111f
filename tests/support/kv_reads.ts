/**
 * Counts the reads made through one KV handle (`get`, `getMany`, `list`; a `list` counts once however many pages it
 * fetches), with the keys each touched. The handle is patched in place, so code that keys anything by the handle
 * (the deposit address sets) still sees the same object.
 */
export interface KvRead {
  op: "get" | "getMany" | "list";
  keys: Deno.KvKey[];
}

export interface ReadCounter {
  readonly reads: KvRead[];
  /** Reads whose keys start with `first` as their first part. */
  touching(first: string): KvRead[];
  reset(): void;
}

export function countReads(kv: Deno.Kv): ReadCounter {
  const reads: KvRead[] = [];
  const get = kv.get.bind(kv);
  const getMany = kv.getMany.bind(kv);
  const list = kv.list.bind(kv);
  kv.get = ((key: Deno.KvKey, options?: { consistency?: Deno.KvConsistencyLevel }) => {
    reads.push({ op: "get", keys: [key] });
    return get(key, options);
  }) as Deno.Kv["get"];
  kv.getMany = ((keys: Deno.KvKey[], options?: { consistency?: Deno.KvConsistencyLevel }) => {
    reads.push({ op: "getMany", keys: [...keys] });
    return getMany(keys, options);
  }) as Deno.Kv["getMany"];
  kv.list = ((selector: Deno.KvListSelector, options?: Deno.KvListOptions) => {
    const s = selector as { prefix?: Deno.KvKey; start?: Deno.KvKey };
    reads.push({ op: "list", keys: [s.prefix ?? s.start ?? []] });
    return list(selector, options);
  }) as Deno.Kv["list"];
  return {
    reads,
    touching: (first) => reads.filter((r) => r.keys.some((k) => k[0] === first)),
    reset: () => void reads.splice(0),
  };
}
