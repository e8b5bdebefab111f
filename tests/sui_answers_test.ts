/**
 * Malformed Sui GraphQL answers are named refusals (chains/sui/answers.ts), on a Sui-GraphQL-shaped server
 * (tests/support/sui_graphql_server.ts: the schema shipped in @mysten/sui over an in-memory chain; no Sui node runs
 * here) that serves one on demand: the error names the operation and the field, and nothing moves: the watcher's
 * cursor stays, no order is recorded, no payout is proven dead or prepared. Served well again, the same deposit is
 * credited once.
 */
import assert from "node:assert/strict";
import type { ChainSymbol } from "../chains/catalog.ts";
import { MalformedAnswerError } from "../chains/shared/answers.ts";
import { suiAdapters } from "../chains/sui/index.ts";
import { Signer } from "../chains/signer.ts";
import { type PipelineContext } from "../actors/context.ts";
import { watchOnce } from "../actors/watcher.ts";
import { type Cursor, cursorKey } from "../kv/pipeline.ts";
import { listOrders } from "../kv/orders.ts";
import { depositAddress, FAST_PIPELINE, partner } from "./support/pipeline.ts";
import { startTestServer } from "./support/server.ts";
import { startSuiGraphqlServer } from "./support/sui_graphql_server.ts";

const signer = Signer.fromMnemonic("test test test test test test test test test test test junk");
const SUI = 1_000_000_000n;

/** Asserts `err` is the named refusal of operation `op` at a field matching `field`. */
function refused(op: string, field: string | RegExp, problem: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof MalformedAnswerError, `a MalformedAnswerError, not ${err}`);
    assert.equal(err.method, op);
    if (typeof field === "string") assert.equal(err.field, field);
    else assert.match(err.field, field);
    assert.match(err.problem, problem);
    assert.ok(err.message.startsWith(`sui GraphQL ${op}: ${err.field} `), err.message);
    return true;
  };
}

type Json = Record<string, unknown>;
const nodes = (connection: unknown) => ((connection ?? { nodes: [] }) as { nodes: Json[] }).nodes;

Deno.test("sui watcher on a Sui-GraphQL-shaped server: a malformed checkpoint is refused by name; the cursor stays, nothing is recorded, and the deposit is credited once when served well", async (t) => {
  const sui = await startSuiGraphqlServer();
  const server = await startTestServer(FAST_PIPELINE);
  await server.pipeline!.stop(); // the sui watcher below runs by hand
  try {
    const kv = server.services.kv;
    const running = server.services.pipeline!;
    const live = suiAdapters({ urls: [sui.url], signer, confirmations: 1 });
    const ctx: PipelineContext = {
      ...running,
      chains: { ...running.chains, reader: (c: ChainSymbol) => c === "sui" ? live.reader : running.chains.reader(c) },
    };
    const { wallet, token } = await partner(server);
    const address = await depositAddress(server, token, "sui", "base");
    sui.mine(1);
    const start = await live.reader.tip();
    const cursor = { number: start.number, hash: start.hash } satisfies Cursor;
    await kv.set(cursorKey("sui"), cursor);
    const digest = sui.deposit(address, 2n * SUI);
    sui.mine(1);
    const orders = async () => (await listOrders(kv, wallet.toLowerCase(), { limit: 10, offset: 0 })).orders;

    /** Serves `edit` of the deposit's transaction in scan answers. */
    const tamperDeposit = (edit: (tx: Json) => void) =>
      sui.tamper("SuiScanCheckpoints", (data) => {
        for (const cp of nodes(data.checkpoints)) {
          for (const tx of nodes(cp.transactions)) if (tx.digest === digest) edit(tx);
        }
        return data;
      });
    const ourChange = (tx: Json) =>
      nodes((tx.effects as Json).balanceChanges).find((c) => (c.amount as string)[0] !== "-")!;
    const changeField = /^checkpoints\.nodes\[\d+\]\.transactions\.nodes\[\d+\]\.effects\.balanceChanges\.nodes\[\d+\]/;

    const malformed: [string, (tx: Json) => void, string | RegExp, RegExp][] = [
      [
        "an amount as a decimal fraction",
        (tx) => ourChange(tx).amount = "2000000000.5",
        new RegExp(changeField.source + /\.amount$/.source),
        /is not a whole number of MIST \("2000000000\.5"\)/,
      ],
      [
        "no amount on a SUI change of an address",
        (tx) => ourChange(tx).amount = null,
        new RegExp(changeField.source + /\.amount$/.source),
        /is missing on a SUI change of an address/,
      ],
      // Read as before this schema, any status but "SUCCESS" was a failure: the deposit was never credited, while the
      // cursor moved past its checkpoint. A lost deposit.
      [
        "an execution status the adapter does not know",
        (tx) => (tx.effects as Json).status = "success",
        /^checkpoints\.nodes\[\d+\]\.transactions\.nodes\[\d+\]\.effects\.status$/,
        /is not SUCCESS or FAILURE \("success"\)/,
      ],
      [
        "an owner that is not an address",
        (tx) => ourChange(tx).owner = { address: "our wallet" },
        new RegExp(changeField.source + /\.owner\.address$/.source),
        /is not a Sui address/,
      ],
    ];
    for (const [name, edit, field, problem] of malformed) {
      await t.step(name, async () => {
        tamperDeposit(edit);
        await assert.rejects(
          () => watchOnce(ctx, "sui", "by-hand", 60_000),
          refused("SuiScanCheckpoints", field, problem),
        );
        assert.deepEqual((await kv.get<Cursor>(cursorKey("sui"))).value, cursor, "the cursor did not move");
        assert.deepEqual(await orders(), [], "nothing recorded");
      });
    }
    await t.step("a sequence number that is not a UInt53", async () => {
      sui.tamper("SuiScanCheckpoints", (data) => {
        nodes(data.checkpoints)[0].sequenceNumber = -1;
        return data;
      });
      await assert.rejects(
        () => watchOnce(ctx, "sui", "by-hand", 60_000),
        refused("SuiScanCheckpoints", "checkpoints.nodes[0].sequenceNumber", /is not a whole number \(-1\)/),
      );
      assert.deepEqual((await kv.get<Cursor>(cursorKey("sui"))).value, cursor);
    });
    await t.step("served well again: credited once", async () => {
      sui.tamper("SuiScanCheckpoints", null);
      await watchOnce(ctx, "sui", "by-hand", 60_000);
      assert.deepEqual((await orders()).map((o) => [o.type, o.amount]), [["mint", String(2n * SUI)]]);
      await watchOnce(ctx, "sui", "by-hand", 60_000);
      assert.equal((await orders()).length, 1);
    });
  } finally {
    await server.close();
    await sui.close();
  }
});

Deno.test("sui reader and payer on a Sui-GraphQL-shaped server: a malformed status, epoch, coin or gas price is refused by name, never read as dead or as a number", async (t) => {
  const sui = await startSuiGraphqlServer();
  try {
    const { reader, payer } = suiAdapters({ urls: [sui.url], signer, confirmations: 1 });
    const unknown = "11111111111111111111111111111111";
    const expired = { raw: "", expiry: { kind: "epoch" as const, value: 0 } };
    sui.advanceEpoch();
    assert.equal((await reader.txStatus(unknown, expired)).state, "dead", "the true answer proves it dead");

    await t.step("SuiTxStatus: an epoch that is not a UInt53", async () => {
      sui.tamper("SuiTxStatus", (data) => ({ ...data, epoch: { epochId: "1.5" } }));
      await assert.rejects(
        () => reader.txStatus(unknown, expired),
        refused("SuiTxStatus", "epoch.epochId", /is not a whole number \("1\.5"\)/),
      );
      sui.tamper("SuiTxStatus", null);
    });
    await t.step("SuiBalance: a negative balance", async () => {
      sui.tamper("SuiBalance", () => ({ address: { balance: { totalBalance: "-5" } } }));
      await assert.rejects(
        () => reader.balance!(signer.address("sui", 1)),
        refused("SuiBalance", "address.balance.totalBalance", /is not a whole number of MIST \("-5"\)/),
      );
      sui.tamper("SuiBalance", null);
    });
    await t.step("the payer: a coin worth a fraction, a gas price in exponent form", async () => {
      sui.deposit(payer.hotWallet!, 10n * SUI);
      sui.mine(1);
      const req = { orderId: "o1", to: signer.address("sui", 5), amount: SUI, memo: null };
      assert.equal((await payer.checkPayout!(req)).ok, true);
      sui.tamper("SuiGasCoins", (data) => {
        const coin = nodes((data.address as Json).objects)[0];
        (coin.contents as { json: Json }).json.balance = "10.5";
        return data;
      });
      await assert.rejects(
        () => payer.checkPayout!(req),
        refused("SuiGasCoins", "address.objects.nodes[0].contents.json.balance", /MIST \("10\.5"\)/),
      );
      sui.tamper("SuiGasCoins", null);
      sui.tamper("SuiEpoch", (data) => ({ epoch: { ...(data.epoch as Json), referenceGasPrice: "1e3" } }));
      await assert.rejects(
        () => payer.preparePayout(req),
        refused("SuiEpoch", "epoch.referenceGasPrice", /is not a whole number of MIST \("1e3"\)/),
      );
      sui.tamper("SuiEpoch", null);
      const prepared = await payer.preparePayout(req);
      assert.equal(prepared.expiry?.kind, "epoch");
      assert.equal(sui.isPending(prepared.txHash), false, "prepared, never sent");
    });
  } finally {
    await sui.close();
  }
});
