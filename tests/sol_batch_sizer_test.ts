/** How many blocks the sol reader asks for per getBlock request (chains/shared/batch_sizer.ts, with the sol reader's bounds). */
import assert from "node:assert/strict";
import { BatchSizer } from "../chains/shared/batch_sizer.ts";
import { MAX_BATCH } from "../chains/sol/rpc.ts";

const MiB = 1024 * 1024;

Deno.test("sol batch sizer: one block first, doubling while answers are small, up to the batch cap", () => {
  const s = new BatchSizer(8 * MiB, MAX_BATCH);
  const sizes = [s.size];
  for (let i = 0; i < 8; i++) {
    s.answered(s.size, s.size * 5_000); // 5 KB blocks: a quiet chain
    sizes.push(s.size);
  }
  assert.deepEqual(sizes, [1, 2, 4, 8, 16, 32, MAX_BATCH, MAX_BATCH, MAX_BATCH]);
});

Deno.test("sol batch sizer: large answers shrink the next request to what fits the target at once", () => {
  const s = new BatchSizer(8 * MiB, MAX_BATCH);
  for (let i = 0; i < 6; i++) s.answered(s.size, s.size * 5_000);
  assert.equal(s.size, MAX_BATCH);
  s.answered(MAX_BATCH, MAX_BATCH * 3 * MiB); // mainnet blocks arrive
  assert.equal(s.size, 2);
  s.answered(2, 2 * 20 * MiB); // a block above the target alone: one at a time, never zero
  assert.equal(s.size, 1);
});

Deno.test("sol batch sizer: a refused request halves the cap, which rises again after answered requests", () => {
  const s = new BatchSizer(8 * MiB, MAX_BATCH);
  for (let i = 0; i < 6; i++) s.answered(s.size, s.size * 5_000);
  s.refused(MAX_BATCH);
  assert.equal(s.size, MAX_BATCH / 2);
  s.refused(s.size);
  s.refused(s.size);
  assert.equal(s.cap, Math.floor(Math.floor(MAX_BATCH / 2 / 2) / 2));
  for (let i = 0; i < 5; i++) s.refused(Math.max(2, s.size));
  assert.equal(s.size, 1, "down to one block per request");
  const capped = s.cap;
  for (let i = 0; i < 19; i++) s.answered(s.size, s.size * 5_000);
  assert.equal(s.cap, capped, "not before 20 answered requests");
  s.answered(s.size, s.size * 5_000);
  assert.equal(s.cap, capped * 2);
});
