/**
 * `deno task admin evm deploy` in its own process against a real anvil: the hot minter key never becomes the
 * contracts' admin by default, the supply cap is required and exact, and a refused deploy sends nothing.
 */
import assert from "node:assert/strict";
import { type Address, createPublicClient, type Hex, http, parseUnits } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { EVM, type UAsset } from "../chains/catalog.ts";
import { parseSupplyCaps } from "../chains/evm/deploy.ts";
import { DEFAULT_ADMIN_ROLE, MINTER_ROLE, PAUSER_ROLE, UASSET_ABI } from "../contracts/uasset.ts";
import { ANVIL_PRIVATE_KEYS, anvilRpc, startAnvil } from "./support/anvil.ts";
import { runTask } from "./support/cli.ts";

const CHAIN_ID = EVM.base.chainId;
const [adminKey, minterKey, deployerKey] = [0, 1, 2].map((i) => ANVIL_PRIVATE_KEYS[i]);
const admin = privateKeyToAccount(adminKey);
const minter = privateKeyToAccount(minterKey);
const deployer = privateKeyToAccount(deployerKey);
const ALL_FIVE = "uSOL=1000,uXRP=2000000,uSUI=3,uDOGE=40000000000,uZEC=5";

Deno.test("evm deploy (CLI process on anvil): a separate admin and a supply cap, or nothing is deployed", async (t) => {
  const anvil = await startAnvil({ chainId: CHAIN_ID });
  const dir = await Deno.makeTempDir({ prefix: "evm-deploy-cli-" });
  try {
    const keyFile = async (name: string, key: string) => {
      const path = `${dir}/${name}.key`;
      await Deno.writeTextFile(path, `${key}\n`, { mode: 0o600 });
      return path;
    };
    const files = {
      EVM_MINTER_KEY_FILE: await keyFile("minter", minterKey),
      EVM_ADMIN_KEY_FILE: await keyFile("admin", adminKey),
      EVM_DEPLOYER_KEY_FILE: await keyFile("deployer", deployerKey),
    };
    const deploy = (env: Partial<typeof files>, ...args: string[]) =>
      runTask("admin", { KV_PATH: `${dir}/kv.sqlite3`, ...env }, [
        ...["evm", "deploy", "--chain", "base", "--rpc-url", anvil.url],
        ...args,
      ]);
    const client = createPublicClient({ transport: http(anvil.url) });
    const sent = async () =>
      (await Promise.all([admin, minter, deployer].map((a) => client.getTransactionCount({ address: a.address }))))
        .reduce((a, b) => a + b, 0);
    const read = <T>(address: Address, functionName: string, args: unknown[] = []) =>
      // deno-lint-ignore no-explicit-any
      client.readContract({ address, abi: UASSET_ABI, functionName, args } as any) as Promise<T>;
    const deployed = (stdout: string) =>
      Object.fromEntries(
        stdout.split("\n").filter((l) => /^u[A-Z]+\t0x[0-9a-fA-F]{40}$/.test(l)).map((l) => l.split("\t")),
      ) as Record<UAsset, Address>;

    await t.step(
      "refused with exit 2 and nothing sent: no admin, a missing or fractional cap, admin = minter",
      async () => {
        const refusals: { env: Partial<typeof files>; args: string[]; says: RegExp }[] = [
          {
            env: { EVM_MINTER_KEY_FILE: files.EVM_MINTER_KEY_FILE },
            args: ["--supply-cap", "1000", "--minter-allowance", "10"],
            says: /EVM_ADMIN_KEY_FILE.*--admin <address>.*EVM_DEPLOYER_KEY_FILE.*--admin-is-minter/s,
          },
          {
            // A deployer key alone is not an admin: before, it silently became one.
            env: { EVM_MINTER_KEY_FILE: files.EVM_MINTER_KEY_FILE, EVM_DEPLOYER_KEY_FILE: files.EVM_DEPLOYER_KEY_FILE },
            args: ["--supply-cap", "1000", "--minter-allowance", "10"],
            says: /EVM_ADMIN_KEY_FILE/,
          },
          {
            env: { EVM_MINTER_KEY_FILE: files.EVM_MINTER_KEY_FILE, EVM_DEPLOYER_KEY_FILE: files.EVM_DEPLOYER_KEY_FILE },
            args: ["--admin", minter.address, "--supply-cap", "1000", "--minter-allowance", "10"],
            says: /is the minter key/,
          },
          {
            env: { EVM_MINTER_KEY_FILE: files.EVM_MINTER_KEY_FILE, EVM_ADMIN_KEY_FILE: files.EVM_ADMIN_KEY_FILE },
            args: [],
            says: /--supply-cap is required/,
          },
          {
            env: { EVM_MINTER_KEY_FILE: files.EVM_MINTER_KEY_FILE, EVM_ADMIN_KEY_FILE: files.EVM_ADMIN_KEY_FILE },
            args: ["--supply-cap", "1.5"],
            says: /whole number of tokens/,
          },
          {
            env: { EVM_MINTER_KEY_FILE: files.EVM_MINTER_KEY_FILE, EVM_ADMIN_KEY_FILE: files.EVM_ADMIN_KEY_FILE },
            args: ["--supply-cap", "uSOL=1,uXRP=2"],
            says: /no value for uSUI, uDOGE, uZEC/,
          },
          {
            env: { EVM_MINTER_KEY_FILE: files.EVM_MINTER_KEY_FILE, EVM_ADMIN_KEY_FILE: files.EVM_ADMIN_KEY_FILE },
            args: ["--supply-cap", "1000"],
            says: /--minter-allowance is required/,
          },
          {
            env: { EVM_MINTER_KEY_FILE: files.EVM_MINTER_KEY_FILE, EVM_ADMIN_KEY_FILE: files.EVM_ADMIN_KEY_FILE },
            args: ["--supply-cap", "1000", "--minter-allowance", "uSOL=1"],
            says: /minter allowance names no value for uXRP/,
          },
        ];
        for (const { env, args, says } of refusals) {
          const res = await deploy(env, ...args);
          assert.equal(res.code, 2, `${args.join(" ")}: ${res.stdout}\n${res.stderr}`);
          assert.match(res.stderr, says);
          assert.equal(res.stdout, "");
        }
        assert.equal(await sent(), 0, "a refused deploy sends no transaction");
      },
    );

    await t.step(
      "EVM_ADMIN_KEY_FILE: the admin deploys and holds the admin roles, the minter MINTER_ROLE only",
      async () => {
        const res = await deploy(
          { EVM_MINTER_KEY_FILE: files.EVM_MINTER_KEY_FILE, EVM_ADMIN_KEY_FILE: files.EVM_ADMIN_KEY_FILE },
          "--supply-cap",
          ALL_FIVE,
          "--minter-allowance",
          "uSOL=10,uXRP=20,uSUI=30,uDOGE=40,uZEC=50",
        );
        assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}`);
        assert.match(res.stdout, new RegExp(`^admin ${admin.address} `, "m"));
        const caps = parseSupplyCaps(ALL_FIVE);
        const allowances = parseSupplyCaps("uSOL=10,uXRP=20,uSUI=30,uDOGE=40,uZEC=50");
        const tokens = deployed(res.stdout);
        assert.equal(Object.keys(tokens).length, 5, res.stdout);
        for (const [symbol, address] of Object.entries(tokens) as [UAsset, Address][]) {
          const hasRole = (role: Hex, who: Address) => read<boolean>(address, "hasRole", [role, who]);
          assert.equal(await hasRole(DEFAULT_ADMIN_ROLE, admin.address), true, `${symbol} admin`);
          assert.equal(await hasRole(PAUSER_ROLE, admin.address), true, `${symbol} pauser`);
          assert.equal(await hasRole(MINTER_ROLE, minter.address), true, `${symbol} minter`);
          assert.equal(await hasRole(DEFAULT_ADMIN_ROLE, minter.address), false, `${symbol}: minter is not admin`);
          assert.equal(await hasRole(PAUSER_ROLE, minter.address), false, `${symbol}: minter cannot pause`);
          assert.equal(await hasRole(MINTER_ROLE, admin.address), false, `${symbol}: admin cannot mint`);
          assert.equal(await read<bigint>(address, "supplyCap"), caps[symbol], `${symbol} cap`);
          assert.equal(
            await read<bigint>(address, "minterAllowance", [minter.address]),
            allowances[symbol],
            `${symbol}: the minter's allowance, set at deployment`,
          );
          assert.equal(
            await read<bigint>(address, "minterAllowance", [admin.address]),
            0n,
            `${symbol}: none for others`,
          );
        }
        assert.equal(caps.uDOGE, parseUnits("40000000000", 18), "whole tokens times 10^18, exactly");
        assert.equal(await client.getTransactionCount({ address: admin.address }), 5, "the admin key deployed");
      },
    );

    await t.step("--admin <address> with EVM_DEPLOYER_KEY_FILE: the deployer pays and gets no role", async () => {
      const res = await deploy(
        { EVM_MINTER_KEY_FILE: files.EVM_MINTER_KEY_FILE, EVM_DEPLOYER_KEY_FILE: files.EVM_DEPLOYER_KEY_FILE },
        ...["--admin", admin.address, "--supply-cap", "7", "--minter-allowance", "7"],
      );
      assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}`);
      const { uSOL } = deployed(res.stdout);
      assert.equal(await read<boolean>(uSOL, "hasRole", [DEFAULT_ADMIN_ROLE, admin.address]), true);
      assert.equal(await read<boolean>(uSOL, "hasRole", [DEFAULT_ADMIN_ROLE, deployer.address]), false);
      assert.equal(await read<bigint>(uSOL, "supplyCap"), parseUnits("7", 18));
    });

    await t.step("--admin-is-minter: allowed, with a warning on stderr", async () => {
      const res = await deploy(
        { EVM_MINTER_KEY_FILE: files.EVM_MINTER_KEY_FILE },
        "--admin-is-minter",
        "--supply-cap",
        "1",
        "--minter-allowance",
        "1",
      );
      assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}`);
      assert.match(res.stderr, /WARNING: --admin-is-minter/);
      const { uSOL } = deployed(res.stdout);
      assert.equal(await read<boolean>(uSOL, "hasRole", [DEFAULT_ADMIN_ROLE, minter.address]), true);
    });
    // The node really did the work above (not a cached answer): three deploys of five contracts.
    assert.ok(Number(await anvilRpc<string>(anvil.url, "eth_blockNumber")) >= 15);
  } finally {
    await anvil.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("parseSupplyCaps: whole tokens as bigint times 10^18, all five named once, or a clear refusal", () => {
  const e18 = 10n ** 18n;
  assert.deepEqual(parseSupplyCaps(" 21000000 "), {
    uSOL: 21_000_000n * e18,
    uXRP: 21_000_000n * e18,
    uSUI: 21_000_000n * e18,
    uDOGE: 21_000_000n * e18,
    uZEC: 21_000_000n * e18,
  });
  // Past 2^53: a float would have rounded it.
  const big = "123456789012345678901";
  assert.equal(parseSupplyCaps(big).uSOL, BigInt(big) * e18);
  assert.deepEqual(parseSupplyCaps("uZEC=5, uSOL=1,uXRP=2,uSUI=3,uDOGE=4"), {
    uSOL: 1n * e18,
    uXRP: 2n * e18,
    uSUI: 3n * e18,
    uDOGE: 4n * e18,
    uZEC: 5n * e18,
  });
  const refused: [string, RegExp][] = [
    ["", /whole number/],
    ["0", /whole number/],
    ["-1", /whole number/],
    ["1.5", /whole number/],
    ["1e6", /whole number/],
    ["1_000", /whole number/],
    ["9".repeat(80), /uint256/],
    ["uSOL=1", /no value for uXRP, uSUI, uDOGE, uZEC/],
    ["uSOL=1,uSOL=2,uXRP=2,uSUI=3,uDOGE=4,uZEC=5", /uSOL is given twice/],
    ["uBTC=1,uSOL=1,uXRP=2,uSUI=3,uDOGE=4,uZEC=5", /unknown uAsset "uBTC"/],
    ["uSOL=1=2", /not <uAsset>=<whole tokens>/],
    ["uSOL=0.5,uXRP=2,uSUI=3,uDOGE=4,uZEC=5", /supply cap of uSOL must be a positive whole number/],
  ];
  for (const [text, message] of refused) assert.throws(() => parseSupplyCaps(text), message, text);
});
