/**
 * The uAsset contract on a real EVM node (anvil): deploy, mint with a deposit id, the on-chain refusal of a second
 * mint for the same deposit, roles, burn; and the committed artifact matches what the sources compile to.
 */
import assert from "node:assert/strict";
import {
  type Abi,
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
  keccak256,
  parseEventLogs,
  parseUnits,
  type PrivateKeyAccount,
  toHex,
  zeroAddress,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { buildUAssetArtifact } from "../contracts/build.ts";
import { compileUAsset, sortKeys } from "../contracts/compile.ts";
import {
  DEFAULT_ADMIN_ROLE,
  MINTER_ROLE,
  PAUSER_ROLE,
  UASSET_ABI,
  UASSET_ARTIFACT_ABI,
  UASSET_BYTECODE,
  UASSET_SOURCE_HASH,
} from "../contracts/uasset.ts";
import { type Anvil, ANVIL_PRIVATE_KEYS, anvilRpc, startAnvil } from "./support/anvil.ts";

/** The revert of a failed call or simulation, decoded against UASSET_ABI. */
function revertOf(err: unknown): { errorName?: string; args?: readonly unknown[] } {
  assert.ok(err instanceof BaseError, `expected a viem error, got ${err}`);
  const revert = err.walk((e) => e instanceof ContractFunctionRevertedError);
  assert.ok(revert instanceof ContractFunctionRevertedError, `expected a contract revert, got ${err.shortMessage}`);
  return { errorName: revert.data?.errorName, args: revert.data?.args };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail("expected a rejection");
}

const depositIdOf = (deposit: string): Hex => keccak256(toHex(deposit));

function clientsOf(anvil: Anvil) {
  const chain = { ...foundry, id: anvil.chainId };
  const transport = http(anvil.url);
  const client = createPublicClient({ chain, transport, pollingInterval: 50 });
  const walletOf = (account: PrivateKeyAccount) =>
    createWalletClient({ account, chain, transport, pollingInterval: 50 });
  const receiptOf = async (hash: Hex) => await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  return { client, walletOf, receiptOf };
}

/** A cap far above what the first test mints. */
const CAP = parseUnits("1000", 18);

Deno.test("UAsset contract on a real anvil node", async (t) => {
  const anvil = await startAnvil();
  try {
    const { client, walletOf, receiptOf } = clientsOf(anvil);
    const [admin, minter, holder, stranger] = ANVIL_PRIVATE_KEYS.slice(0, 4).map((k) => privateKeyToAccount(k));
    let token: Address = zeroAddress;

    const read = {
      balanceOf: (who: Address) =>
        client.readContract({ address: token, abi: UASSET_ABI, functionName: "balanceOf", args: [who] }),
      totalSupply: () => client.readContract({ address: token, abi: UASSET_ABI, functionName: "totalSupply" }),
      minted: (id: Hex) => client.readContract({ address: token, abi: UASSET_ABI, functionName: "minted", args: [id] }),
    };

    await t.step("the exported dev keys are anvil's funded accounts", async () => {
      const accounts = await anvilRpc<string[]>(anvil.url, "eth_accounts");
      assert.deepEqual(
        ANVIL_PRIVATE_KEYS.map((k) => privateKeyToAccount(k).address.toLowerCase()),
        accounts.slice(0, ANVIL_PRIVATE_KEYS.length).map((a) => a.toLowerCase()),
      );
    });

    await t.step("deploys with DEFAULT_ADMIN_ROLE and MINTER_ROLE granted by the constructor", async () => {
      const hash = await walletOf(admin).deployContract({
        abi: UASSET_ABI,
        bytecode: UASSET_BYTECODE,
        args: ["Universal SOL", "uSOL", admin.address, minter.address, CAP, CAP],
      });
      const receipt = await receiptOf(hash);
      assert.equal(receipt.status, "success");
      assert.ok(receipt.contractAddress);
      token = receipt.contractAddress;

      const call = <F extends "name" | "symbol" | "decimals" | "MINTER_ROLE" | "DEFAULT_ADMIN_ROLE">(functionName: F) =>
        client.readContract({ address: token, abi: UASSET_ABI, functionName });
      const hasRole = (role: Hex, who: Address) =>
        client.readContract({ address: token, abi: UASSET_ABI, functionName: "hasRole", args: [role, who] });
      assert.equal(await call("name"), "Universal SOL");
      assert.equal(await call("symbol"), "uSOL");
      assert.equal(await call("decimals"), 18);
      assert.equal(await call("MINTER_ROLE"), MINTER_ROLE);
      assert.equal(await call("DEFAULT_ADMIN_ROLE"), DEFAULT_ADMIN_ROLE);
      assert.equal(await read.totalSupply(), 0n);
      assert.equal(await hasRole(DEFAULT_ADMIN_ROLE, admin.address), true);
      assert.equal(await hasRole(MINTER_ROLE, minter.address), true);
      assert.equal(await hasRole(MINTER_ROLE, admin.address), false);
      assert.equal(await hasRole(DEFAULT_ADMIN_ROLE, minter.address), false);
      assert.equal(await hasRole(PAUSER_ROLE, admin.address), true);
      assert.equal(await hasRole(PAUSER_ROLE, minter.address), false);
      assert.equal(await client.readContract({ address: token, abi: UASSET_ABI, functionName: "supplyCap" }), CAP);
      assert.equal(await client.readContract({ address: token, abi: UASSET_ABI, functionName: "paused" }), false);
    });

    const depositId = depositIdOf("sol:5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnb:0");
    const amount = parseUnits("1.5", 18);

    await t.step("the minter mints: balance, Transfer from address(0) and Minted(depositId) logs", async () => {
      assert.equal(await read.minted(depositId), false);
      const hash = await walletOf(minter).writeContract({
        address: token,
        abi: UASSET_ABI,
        functionName: "mint",
        args: [holder.address, amount, depositId],
      });
      const receipt = await receiptOf(hash);
      assert.equal(receipt.status, "success");

      const logs = parseEventLogs({ abi: UASSET_ABI, logs: receipt.logs });
      assert.deepEqual(
        logs.map((l) => [l.address.toLowerCase(), l.eventName, l.args]),
        [
          [token.toLowerCase(), "Transfer", { from: zeroAddress, to: holder.address, value: amount }],
          [token.toLowerCase(), "Minted", { depositId, to: holder.address, amount }],
        ],
      );
      assert.equal(await read.balanceOf(holder.address), amount);
      assert.equal(await read.totalSupply(), amount);
      assert.equal(await read.minted(depositId), true);
      assert.equal(await read.minted(depositIdOf("another deposit")), false);

      // depositId is indexed: recovery can ask the chain whether (and where) a given deposit was minted.
      const found = await client.getContractEvents({
        address: token,
        abi: UASSET_ABI,
        eventName: "Minted",
        args: { depositId },
        fromBlock: 0n,
      });
      assert.equal(found.length, 1);
      assert.equal(found[0].transactionHash, hash);
    });

    await t.step(
      "a second mint with the same depositId reverts with DepositAlreadyMinted and changes nothing",
      async () => {
        const before = {
          holder: await read.balanceOf(holder.address),
          stranger: await read.balanceOf(stranger.address),
          supply: await read.totalSupply(),
        };
        // Another recipient and amount: it is the deposit id alone that the contract refuses to pay twice.
        const again = {
          address: token,
          abi: UASSET_ABI,
          functionName: "mint",
          args: [stranger.address, 7n, depositId],
        } as const;

        const simulated = revertOf(await rejection(client.simulateContract({ ...again, account: minter })));
        assert.deepEqual(simulated, { errorName: "DepositAlreadyMinted", args: [depositId] });

        // Broadcast anyway (explicit gas skips estimation, as a blind rebroadcast would): mined, reverted, no effect.
        const hash = await walletOf(minter).writeContract({ ...again, gas: 200_000n });
        const receipt = await receiptOf(hash);
        assert.equal(receipt.status, "reverted");
        assert.deepEqual(receipt.logs, []);
        assert.deepEqual(
          {
            holder: await read.balanceOf(holder.address),
            stranger: await read.balanceOf(stranger.address),
            supply: await read.totalSupply(),
          },
          before,
        );
      },
    );

    await t.step("an account without MINTER_ROLE cannot mint, not even the admin", async () => {
      const fresh = depositIdOf("xrp:ABCDEF:0");
      for (const account of [stranger, admin]) {
        const err = await rejection(
          client.simulateContract({
            address: token,
            abi: UASSET_ABI,
            functionName: "mint",
            args: [account.address, 1n, fresh],
            account,
          }),
        );
        assert.deepEqual(revertOf(err), {
          errorName: "AccessControlUnauthorizedAccount",
          args: [account.address, MINTER_ROLE],
        });
      }
      assert.equal(await read.minted(fresh), false);
    });

    await t.step("the admin rotates the minter with configureMinter / removeMinter", async () => {
      const admins = async (functionName: "configureMinter" | "removeMinter", args: readonly unknown[]) => {
        const hash = await walletOf(admin).writeContract(
          {
            address: token,
            abi: UASSET_ABI,
            functionName,
            args,
          } as Parameters<ReturnType<typeof walletOf>["writeContract"]>[0],
        );
        assert.equal((await receiptOf(hash)).status, "success");
      };
      const mintAs = (id: Hex) =>
        client.simulateContract({
          address: token,
          abi: UASSET_ABI,
          functionName: "mint",
          args: [holder.address, 1n, id],
          account: stranger,
        });
      await admins("configureMinter", [stranger.address, 1n]);
      await mintAs(depositIdOf("rotation"));
      await admins("removeMinter", [stranger.address]);
      assert.equal(
        revertOf(await rejection(mintAs(depositIdOf("rotation")))).errorName,
        "AccessControlUnauthorizedAccount",
      );
    });

    await t.step("burn and burnFrom reduce balance and total supply, with a Transfer to address(0)", async () => {
      const supply = await read.totalSupply();
      const burned = parseUnits("0.5", 18);
      const hash = await walletOf(holder).writeContract({
        address: token,
        abi: UASSET_ABI,
        functionName: "burn",
        args: [burned],
      });
      const receipt = await receiptOf(hash);
      assert.equal(receipt.status, "success");
      const logs = parseEventLogs({ abi: UASSET_ABI, logs: receipt.logs, eventName: "Transfer" });
      assert.deepEqual(logs.map((l) => l.args), [{ from: holder.address, to: zeroAddress, value: burned }]);
      assert.equal(await read.totalSupply(), supply - burned);
      assert.equal(await read.balanceOf(holder.address), amount - burned);

      const more = parseUnits("0.25", 18);
      const burnFrom = {
        address: token,
        abi: UASSET_ABI,
        functionName: "burnFrom",
        args: [holder.address, more],
      } as const;
      assert.equal(
        revertOf(await rejection(client.simulateContract({ ...burnFrom, account: stranger }))).errorName,
        "ERC20InsufficientAllowance",
      );
      const approve = await walletOf(holder).writeContract({
        address: token,
        abi: UASSET_ABI,
        functionName: "approve",
        args: [stranger.address, more],
      });
      assert.equal((await receiptOf(approve)).status, "success");
      assert.equal((await receiptOf(await walletOf(stranger).writeContract(burnFrom))).status, "success");
      assert.equal(await read.totalSupply(), supply - burned - more);

      const tooMuch = revertOf(
        await rejection(
          client.simulateContract({
            address: token,
            abi: UASSET_ABI,
            functionName: "burn",
            args: [amount],
            account: holder,
          }),
        ),
      );
      assert.equal(tooMuch.errorName, "ERC20InsufficientBalance");
    });

    await t.step("anvilRpc drives the node: evm_snapshot, evm_mine, evm_revert", async () => {
      const start = await client.getBlockNumber({ cacheTime: 0 });
      const snapshot = await anvilRpc<Hex>(anvil.url, "evm_snapshot");
      await anvilRpc(anvil.url, "evm_mine");
      assert.equal(await client.getBlockNumber({ cacheTime: 0 }), start + 1n);
      assert.equal(await anvilRpc<boolean>(anvil.url, "evm_revert", [snapshot]), true);
      assert.equal(await client.getBlockNumber({ cacheTime: 0 }), start);
    });
  } finally {
    await anvil.stop();
  }
});

Deno.test("UAsset pause and supply cap on a real anvil node: only the admin controls them", async (t) => {
  const anvil = await startAnvil();
  try {
    const { client, walletOf, receiptOf } = clientsOf(anvil);
    const [admin, minter, holder, stranger] = ANVIL_PRIVATE_KEYS.slice(0, 4).map((k) => privateKeyToAccount(k));
    const cap = parseUnits("10", 18);
    const deployed = await receiptOf(
      await walletOf(admin).deployContract({
        abi: UASSET_ABI,
        bytecode: UASSET_BYTECODE,
        // An allowance far above the cap: this test is about the cap (the allowance has its own test below).
        args: ["Universal XRP", "uXRP", admin.address, minter.address, cap, cap * 1_000_000n],
      }),
    );
    assert.equal(deployed.status, "success");
    const token = deployed.contractAddress!;
    assert.deepEqual(
      parseEventLogs({ abi: UASSET_ABI, logs: deployed.logs, eventName: "SupplyCapSet" }).map((l) => l.args),
      [{ previousCap: 0n, newCap: cap }],
      "the constructor's cap is on record",
    );
    const contract = { address: token, abi: UASSET_ABI } as const;
    const balanceOf = (who: Address) => client.readContract({ ...contract, functionName: "balanceOf", args: [who] });
    const supply = () => client.readContract({ ...contract, functionName: "totalSupply" });
    const mint = (amount: bigint, id: Hex) =>
      client.simulateContract({
        ...contract,
        functionName: "mint",
        args: [holder.address, amount, id],
        account: minter,
      });
    const send = async (account: PrivateKeyAccount, call: Parameters<typeof client.simulateContract>[0]) => {
      const { request } = await client.simulateContract({ ...call, account } as typeof call);
      // deno-lint-ignore no-explicit-any
      const receipt = await receiptOf(await walletOf(account).writeContract(request as any));
      assert.equal(receipt.status, "success");
      return receipt;
    };
    const paused = () => client.readContract({ ...contract, functionName: "paused" });
    await send(minter, {
      ...contract,
      functionName: "mint",
      args: [holder.address, parseUnits("4", 18), depositIdOf("a")],
    });

    await t.step("the minter cannot pause, unpause or set the cap: AccessControlUnauthorizedAccount", async () => {
      for (const account of [minter, stranger]) {
        for (
          const call of [
            { functionName: "pause", args: [] },
            { functionName: "unpause", args: [] },
            { functionName: "setSupplyCap", args: [cap * 2n] },
          ] as const
        ) {
          const err = await rejection(client.simulateContract({ ...contract, ...call, account }));
          assert.deepEqual(revertOf(err), {
            errorName: "AccessControlUnauthorizedAccount",
            args: [account.address, call.functionName === "setSupplyCap" ? DEFAULT_ADMIN_ROLE : PAUSER_ROLE],
          });
        }
      }
      assert.equal(await paused(), false);
      assert.equal(await client.readContract({ ...contract, functionName: "supplyCap" }), cap);
    });

    await t.step("a paused token refuses mints and transfers (EnforcedPause); unpausing restores both", async () => {
      const receipt = await send(admin, { ...contract, functionName: "pause" });
      assert.deepEqual(
        parseEventLogs({ abi: UASSET_ABI, logs: receipt.logs, eventName: "Paused" }).map((l) => l.args),
        [{ account: admin.address }],
      );
      assert.equal(await paused(), true);
      const before = { supply: await supply(), holder: await balanceOf(holder.address) };
      assert.equal(revertOf(await rejection(mint(1n, depositIdOf("while paused")))).errorName, "EnforcedPause");
      const transfer = {
        ...contract,
        functionName: "transfer",
        args: [stranger.address, 1n],
        account: holder,
      } as const;
      assert.equal(revertOf(await rejection(client.simulateContract(transfer))).errorName, "EnforcedPause");
      // Broadcast anyway (explicit gas skips estimation): mined, reverted, nothing moved.
      const blind = await walletOf(minter).writeContract({
        ...contract,
        functionName: "mint",
        args: [holder.address, 1n, depositIdOf("while paused")],
        gas: 200_000n,
      });
      assert.equal((await receiptOf(blind)).status, "reverted");
      assert.deepEqual({ supply: await supply(), holder: await balanceOf(holder.address) }, before);
      assert.equal(
        await client.readContract({ ...contract, functionName: "minted", args: [depositIdOf("while paused")] }),
        false,
      );

      await send(admin, { ...contract, functionName: "unpause" });
      assert.equal(await paused(), false);
      await send(minter, {
        ...contract,
        functionName: "mint",
        args: [holder.address, 1n, depositIdOf("while paused")],
      });
      await send(holder, { ...contract, functionName: "transfer", args: [stranger.address, 1n] });
      assert.equal(await balanceOf(stranger.address), 1n);
    });

    await t.step(
      "a mint above the cap reverts with SupplyCapExceeded(cap, wouldBe); the admin moves the cap",
      async () => {
        const current = await supply();
        const room = cap - current;
        const over = revertOf(await rejection(mint(room + 1n, depositIdOf("over"))));
        assert.deepEqual(over, { errorName: "SupplyCapExceeded", args: [cap, cap + 1n] });
        // Exactly up to the cap is allowed.
        await send(minter, {
          ...contract,
          functionName: "mint",
          args: [holder.address, room, depositIdOf("to the cap")],
        });
        assert.equal(await supply(), cap);
        assert.deepEqual(revertOf(await rejection(mint(1n, depositIdOf("one more")))), {
          errorName: "SupplyCapExceeded",
          args: [cap, cap + 1n],
        });
        const raised = cap + parseUnits("5", 18);
        const receipt = await send(admin, { ...contract, functionName: "setSupplyCap", args: [raised] });
        assert.deepEqual(
          parseEventLogs({ abi: UASSET_ABI, logs: receipt.logs, eventName: "SupplyCapSet" }).map((l) => l.args),
          [{ previousCap: cap, newCap: raised }],
        );
        await send(minter, { ...contract, functionName: "mint", args: [holder.address, 1n, depositIdOf("one more")] });
        // A cap below the supply stops every mint; burns still work.
        await send(admin, { ...contract, functionName: "setSupplyCap", args: [0n] });
        assert.equal(revertOf(await rejection(mint(1n, depositIdOf("capped at zero")))).errorName, "SupplyCapExceeded");
        await send(holder, { ...contract, functionName: "burn", args: [1n] });
      },
    );

    await t.step("the deposit-id guard still comes first: a minted id is refused even under the cap", async () => {
      await send(admin, { ...contract, functionName: "setSupplyCap", args: [cap * 1000n] });
      assert.deepEqual(revertOf(await rejection(mint(1n, depositIdOf("a")))), {
        errorName: "DepositAlreadyMinted",
        args: [depositIdOf("a")],
      });
    });
  } finally {
    await anvil.stop();
  }
});

Deno.test("startAnvil: chain id option, and kill() then stop() leaves nothing running", async () => {
  const anvil = await startAnvil({ chainId: 8453 });
  try {
    assert.equal(await anvilRpc<Hex>(anvil.url, "eth_chainId"), toHex(8453));
    anvil.kill();
  } finally {
    await anvil.stop();
  }
  await assert.rejects(anvilRpc(anvil.url, "eth_chainId"), TypeError);
});

Deno.test("the committed artifact is not stale", () => {
  const committed = JSON.parse(Deno.readTextFileSync(new URL("../contracts/UAsset.artifact.json", import.meta.url)));
  const fresh = compileUAsset();
  const hint = "contracts/UAsset.artifact.json is stale: run `deno task build:contracts` and commit it";
  assert.equal(committed.contractName, "UAsset", hint);
  assert.deepEqual(committed.abi, fresh.abi, hint);
  assert.equal(committed.bytecode, fresh.bytecode, hint);
  assert.equal(committed.sourceHash, fresh.sourceHash, hint);
  assert.equal(UASSET_SOURCE_HASH, fresh.sourceHash, hint);
  assert.equal(
    Deno.readTextFileSync(new URL("../contracts/UAsset.artifact.json", import.meta.url)),
    buildUAssetArtifact(),
    hint,
  );
});

Deno.test("UASSET_ABI (typed, human-readable) is exactly the artifact's ABI", () => {
  // Fields that carry no ABI meaning, or that solc and viem's parseAbi spell differently for the same thing.
  const normalize = (abi: Abi) =>
    abi.map((entry) =>
      JSON.stringify(sortKeys(entry), (key, value) => {
        if (key === "internalType") return undefined;
        if ((key === "indexed" || key === "anonymous") && value === false) return undefined;
        if (key === "name" && value === "") return undefined;
        return value;
      })
    ).sort();
  assert.deepEqual(normalize(UASSET_ABI), normalize(UASSET_ARTIFACT_ABI));
});

Deno.test("UAsset minter allowance on anvil: each mint spends it, only the admin raises it, and a stolen minter key mints at most what is left", async () => {
  const anvil = await startAnvil();
  try {
    const { client, walletOf, receiptOf } = clientsOf(anvil);
    const [admin, minter, holder, stranger] = ANVIL_PRIVATE_KEYS.slice(0, 4).map((k) => privateKeyToAccount(k));
    const allowance = parseUnits("10", 18);
    const deployed = await receiptOf(
      await walletOf(admin).deployContract({
        abi: UASSET_ABI,
        bytecode: UASSET_BYTECODE,
        args: ["Universal SOL", "uSOL", admin.address, minter.address, CAP, allowance],
      }),
    );
    const token = deployed.contractAddress!;
    const left = (who: Address) =>
      client.readContract({ address: token, abi: UASSET_ABI, functionName: "minterAllowance", args: [who] });
    const configured = (who: Address) =>
      client.readContract({ address: token, abi: UASSET_ABI, functionName: "minterAllowanceConfigured", args: [who] });
    const supply = () => client.readContract({ address: token, abi: UASSET_ABI, functionName: "totalSupply" });
    const mint = (by: PrivateKeyAccount, amount: bigint, deposit: string) =>
      walletOf(by).writeContract({
        address: token,
        abi: UASSET_ABI,
        functionName: "mint",
        args: [holder.address, amount, depositIdOf(deposit)],
      });
    const simulateMint = (by: PrivateKeyAccount, amount: bigint, deposit: string) =>
      client.simulateContract({
        account: by,
        address: token,
        abi: UASSET_ABI,
        functionName: "mint",
        args: [holder.address, amount, depositIdOf(deposit)],
      });
    assert.equal(await left(minter.address), allowance, "set by the constructor");
    assert.equal(await configured(minter.address), allowance);

    // Each mint spends the allowance.
    assert.equal((await receiptOf(await mint(minter, parseUnits("4", 18), "a"))).status, "success");
    assert.equal(await left(minter.address), parseUnits("6", 18));
    assert.equal(await configured(minter.address), allowance, "what the admin set stays the reference");

    // The key is stolen: whoever holds it mints everything left, and not one wei more, whatever the supply cap says.
    assert.equal((await receiptOf(await mint(minter, parseUnits("6", 18), "stolen-1"))).status, "success");
    assert.equal(await left(minter.address), 0n);
    const over = revertOf(await rejection(simulateMint(minter, 1n, "stolen-2")));
    assert.equal(over.errorName, "MinterAllowanceExceeded");
    assert.deepEqual(over.args, [0n, 1n]);
    assert.equal(await supply(), allowance, "the most a stolen minter key mints is the allowance it had left");

    // The minter cannot raise its own allowance, nor make another minter, nor grant itself the role again.
    for (
      const attempt of [
        // Thunks, each run when awaited: a rejection created early would be unhandled while the previous is awaited.
        () =>
          client.simulateContract({
            account: minter,
            address: token,
            abi: UASSET_ABI,
            functionName: "configureMinter",
            args: [minter.address, CAP],
          }),
        () =>
          client.simulateContract({
            account: minter,
            address: token,
            abi: UASSET_ABI,
            functionName: "configureMinter",
            args: [stranger.address, CAP],
          }),
        () =>
          client.simulateContract({
            account: minter,
            address: token,
            abi: UASSET_ABI,
            functionName: "grantRole",
            args: [MINTER_ROLE, stranger.address],
          }),
      ]
    ) {
      assert.equal(revertOf(await rejection(attempt())).errorName, "AccessControlUnauthorizedAccount");
    }

    // The admin retires the stolen key and brings in a new one with its own allowance.
    await receiptOf(
      await walletOf(admin).writeContract({
        address: token,
        abi: UASSET_ABI,
        functionName: "removeMinter",
        args: [minter.address],
      }),
    );
    assert.equal(
      revertOf(await rejection(simulateMint(minter, 1n, "after-removal"))).errorName,
      "AccessControlUnauthorizedAccount",
    );
    await receiptOf(
      await walletOf(admin).writeContract({
        address: token,
        abi: UASSET_ABI,
        functionName: "configureMinter",
        args: [stranger.address, parseUnits("2", 18)],
      }),
    );
    assert.equal(await left(stranger.address), parseUnits("2", 18));
    assert.equal((await receiptOf(await mint(stranger, parseUnits("2", 18), "b"))).status, "success");
    assert.equal(revertOf(await rejection(simulateMint(stranger, 1n, "c"))).errorName, "MinterAllowanceExceeded");
    // A role granted without an allowance mints nothing: the allowance is the gate, not the role alone.
    await receiptOf(
      await walletOf(admin).writeContract({
        address: token,
        abi: UASSET_ABI,
        functionName: "grantRole",
        args: [MINTER_ROLE, holder.address],
      }),
    );
    assert.equal(revertOf(await rejection(simulateMint(holder, 1n, "d"))).errorName, "MinterAllowanceExceeded");
  } finally {
    await anvil.stop();
  }
});
