import assert from "node:assert/strict";
import { mnemonicToSeedSync } from "@scure/bip39";
import { Wallet } from "xrpl";
import * as bitcoin from "bitcoinjs-lib";
import * as utxolib from "@bitgo/utxo-lib";
import { Ed25519Keypair } from "@mysten/sui/keypairs/ed25519";
import { mnemonicToAccount } from "viem/accounts";
import { createKeyPairFromPrivateKeyBytes, getAddressDecoder, getAddressFromPublicKey } from "@solana/kit";
import { HDKey as Slip10Key } from "micro-key-producer/slip10.js";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { ed25519 } from "@noble/curves/ed25519.js";
import { NATIVE_CHAINS } from "../chains/catalog.ts";
import { destinationAddressError } from "../chains/addresses.ts";
import {
  Deriver,
  evmAddressFromPublicKey,
  MAX_DEPOSIT_INDEX,
  publicKeyToAddress,
  slip10Ed25519PublicKey,
} from "../chains/derivation.ts";
import { Signer } from "../chains/signer.ts";

// The BIP39 reference mnemonic (entropy 00..00), trezor/python-mnemonic vectors.json.
const ABANDON = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about";
// Trezor's device-test mnemonic (setup_mnemonic_allallall).
const ALL = "all all all all all all all all all all all all";
// Hardhat's and Anvil's default development mnemonic.
const TEST_JUNK = "test test test test test test test test test test test junk";

const INDEXES = [0, 1, 2, 19, 1000, MAX_DEPOSIT_INDEX];

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
const fromHex = (s: string) => Uint8Array.from(s.match(/../g)!, (h) => parseInt(h, 16));

// Dogecoin mainnet parameters as in Dogecoin Core's chainparams.cpp.
const DOGECOIN: bitcoin.Network = {
  messagePrefix: "\x19Dogecoin Signed Message:\n",
  bech32: "",
  bip32: { public: 0x02facafd, private: 0x02fac398 },
  pubKeyHash: 0x1e,
  scriptHash: 0x16,
  wif: 0x9e,
};

Deno.test("derivation: published test vectors", async (t) => {
  const abandon = Deriver.fromMnemonic(ABANDON);

  await t.step("SLIP-0010 ed25519 test vector 1 (satoshilabs/slips slip-0010.md, seed 000102..0f)", () => {
    const seed = fromHex("000102030405060708090a0b0c0d0e0f");
    // The spec prints ed25519 public keys with a 00 prefix; the raw key is the remaining 32 bytes.
    const vectors: [string, string][] = [
      ["m", "a4b2856bfec510abab89753fac1ac0e1112364e7d250545963f135f2a33188ed"],
      ["m/0'", "8c8a13df77a28f3445213a0f432fde644acaa215fc72dcdf300d5efaa85d350c"],
      ["m/0'/1'", "1932a5270f335bed617d5b935c80aedb1a35bd9fc1e31acafd5372c30f5c1187"],
      ["m/0'/1'/2'", "ae98736566d30ed0e9d2f4486a64bc95740d89c7db33f52121f8ea8f76ff0fc1"],
      ["m/0'/1'/2'/2'", "8abae2d66361c879b900d204ad2cc4984fa2aa344dd7ddc46007329ac76c429c"],
      ["m/0'/1'/2'/2'/1000000000'", "3c24da049451555d51a7014a37337aa4e12d41e485abccfa46b47dfb2af54b7a"],
    ];
    for (const [path, publicKey] of vectors) assert.equal(hex(slip10Ed25519PublicKey(seed, path)), publicKey, path);
    assert.throws(() => slip10Ed25519PublicKey(seed, "m/0'/1"), /hardened/);
  });

  await t.step("sui: Sui TS SDK ed25519-keypair.test.ts TEST_CASES (m/44'/784'/0'/0'/0')", () => {
    const cases: [string, string][] = [
      [
        "film crazy soon outside stand loop subway crumble thrive popular green nuclear struggle pistol arm wife phrase warfare march wheat nephew ask sunny firm",
        "0xa2d14fad60c56049ecf75246a481934691214ce413e6a8ae2fe6834c173a6133",
      ],
      [
        "require decline left thought grid priority false tiny gasp angle royal system attack beef setup reward aunt skill wasp tray vital bounce inflict level",
        "0x1ada6e6f3f3e4055096f606c746690f1108fcc2ca479055cc434a3e1d3f758aa",
      ],
      [
        "organ crash swim stick traffic remember army arctic mesh slice swear summer police vast chaos cradle squirrel hood useless evidence pet hub soap lake",
        "0xe69e896ca10f5a77732769803cc2b5707f0ab9d4407afb5e4b4464b89769af14",
      ],
    ];
    for (const [mnemonic, address] of cases) {
      assert.equal(Deriver.fromMnemonic(mnemonic).depositAddress("sui", 0), address);
    }
  });

  await t.step("sol: Phantom / solana-keygen first account of the BIP39 reference mnemonic (m/44'/501'/0'/0')", () => {
    assert.equal(abandon.depositAddress("sol", 0), "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk");
  });

  await t.step("xrp: trezor-firmware test_msg_ripple_get_address.py (all-all-all mnemonic)", () => {
    const all = Deriver.fromMnemonic(ALL);
    assert.equal(all.depositAddress("xrp", 0), "rNaqKtKrMSwpwZSzRckPf7S96DkimjkF4H"); // m/44'/144'/0'/0/0
    assert.equal(all.depositAddress("xrp", 1), "rBKz5MC2iXdoS3XgnNSYmF69K1Yo4NS3Ws"); // m/44'/144'/0'/0/1
  });

  await t.step("doge: EdgeApp edge-currency-plugins dogecoin.spec.ts (iancoleman-verified, m/44'/3'/0'/0/0)", () => {
    assert.equal(abandon.depositAddress("doge", 0), "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC");
  });

  await t.step("zec: EdgeApp zcash.spec.ts, brave-core zcash_keyring_unittest.cc, zcash-android-wallet-sdk", () => {
    // EdgeApp edge-currency-plugins zcash.spec.ts (iancoleman-verified), m/44'/133'/0'/0/0
    assert.equal(abandon.depositAddress("zec", 0), "t1XVXWCvpMgBvUaed4XDqWtgQgJSu1Ghz7F");
    // brave-core zcash_keyring_unittest.cc GetTransparentAddress, account 0, external chain, indexes 0..4
    const brave = Deriver.fromMnemonic(
      "immense leader act drama someone renew become mention fragile wide cinnamon obtain wool window mirror",
    );
    const expected = [
      "t1fhcesXQLT3U1t7caBYTpd59LiRV8tVfqj",
      "t1WTZNzKCvU2GeM1ZWRyF7EvhMHhr7magiT",
      "t1NPwPhNPHc4S8Xktzq4ygnLLLeuVKgCBZz",
      "t1fe6a9otS98EdnucHLx6cT4am6Ae6THUgj",
      "t1dA52xDndfEo9jJU7DBFSKuxKMqZMMLEGL",
    ];
    expected.forEach((address, i) => assert.equal(brave.depositAddress("zec", i), address));
    // zcash-android-wallet-sdk TransparentTest.kt (quoted by brave-core), m/44'/133'/0'/0/0
    const deputy = Deriver.fromMnemonic(
      "deputy visa gentle among clean scout farm drive comfort patch skin salt ranch cool ramp warrior drink narrow normal lunch behind salt deal person",
    );
    assert.equal(deputy.depositAddress("zec", 0), "t1PKtYdJJHhc3Pxowmznkg7vdTwnhEsCvR4");
  });

  await t.step("evm: Hardhat/Anvil default accounts and the BIP39 reference mnemonic's first account", () => {
    const junk = Deriver.fromMnemonic(TEST_JUNK);
    assert.equal(junk.evmAddress(), "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
    assert.equal(junk.evmAddress("m/44'/60'/0'/0/1"), "0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
    assert.equal(abandon.evmAddress(), "0x9858EfFD232B4033E47d90003D41EC34EcaEda94");
  });

  await t.step("public key encodings: trustwallet wallet-core CoinAddressDerivationTests.cpp (key 0x46 x 32)", () => {
    const privateKey = new Uint8Array(32).fill(0x46);
    const compressed = secp256k1.getPublicKey(privateKey, true);
    const edPublic = ed25519.getPublicKey(privateKey);
    assert.equal(publicKeyToAddress("xrp", compressed), "rJHMeqKu8Ep7Fazx8MQG6JunaafBXz93YQ");
    assert.equal(publicKeyToAddress("doge", compressed), "DNRTC6GZ5evmM7BZWwPqF54fyDqUqULMyu");
    assert.equal(publicKeyToAddress("zec", compressed), "t1b9xfAk3kZp5Qk3rinDPq7zzLkJGHTChDS");
    assert.equal(publicKeyToAddress("sol", edPublic), "H4JcMPicKkHcxxDjkyyrLoQj7Kcibd9t815ak4UvTr9M");
    assert.equal(
      publicKeyToAddress("sui", edPublic),
      "0x870deb25d5c0a4d7250d52d5cd58dacca2d51eb2a120a979b13384cd52e21e1b",
    );
    assert.equal(evmAddressFromPublicKey(compressed), "0x9d8A62f656a8d1615C1294fd71e9CFb3E4855A4F");
    assert.throws(() => publicKeyToAddress("xrp", edPublic), /length/);
  });
});

Deno.test("derivation: agrees with each chain's own library at several indexes", async (t) => {
  const deriver = Deriver.fromMnemonic(ABANDON);
  const seed = mnemonicToSeedSync(ABANDON);

  await t.step("xrp: xrpl Wallet.fromMnemonic", () => {
    for (const i of INDEXES) {
      const wallet = Wallet.fromMnemonic(ABANDON, { derivationPath: `m/44'/144'/0'/0/${i}` });
      assert.equal(deriver.depositAddress("xrp", i), wallet.classicAddress, `index ${i}`);
    }
  });

  await t.step("sui: @mysten/sui Ed25519Keypair.deriveKeypair", () => {
    for (const i of INDEXES) {
      const keypair = Ed25519Keypair.deriveKeypair(ABANDON, `m/44'/784'/0'/0'/${i}'`);
      assert.equal(deriver.depositAddress("sui", i), keypair.getPublicKey().toSuiAddress(), `index ${i}`);
    }
  });

  await t.step("sol: micro-key-producer SLIP-0010 + @solana/kit addresses (WebCrypto key pair)", async () => {
    const master = Slip10Key.fromMasterSeed(seed);
    for (const i of INDEXES) {
      const node = master.derive(`m/44'/501'/${i}'/0'`);
      const keyPair = await createKeyPairFromPrivateKeyBytes(node.privateKey);
      const expected = await getAddressFromPublicKey(keyPair.publicKey);
      assert.equal(getAddressDecoder().decode(node.publicKeyRaw), expected);
      assert.equal(deriver.depositAddress("sol", i), expected, `index ${i}`);
    }
  });

  await t.step("doge: @bitgo/utxo-lib BIP32 + bitcoinjs-lib p2pkh with the Dogecoin network", () => {
    const root = utxolib.bip32.fromSeed(Buffer.from(seed));
    for (const i of INDEXES) {
      const pubkey = root.derivePath(`m/44'/3'/0'/0/${i}`).publicKey;
      const expected = bitcoin.payments.p2pkh({ pubkey, network: DOGECOIN }).address;
      assert.equal(deriver.depositAddress("doge", i), expected, `index ${i}`);
    }
  });

  await t.step("zec: @bitgo/utxo-lib with its zcash network", () => {
    const root = utxolib.bip32.fromSeed(Buffer.from(seed));
    for (const i of INDEXES) {
      const pubkey = root.derivePath(`m/44'/133'/0'/0/${i}`).publicKey;
      const output = utxolib.payments.p2pkh({ pubkey }).output!;
      const expected = utxolib.address.fromOutputScript(output, utxolib.networks.zcash);
      assert.equal(deriver.depositAddress("zec", i), expected, `index ${i}`);
    }
  });

  await t.step("evm: viem mnemonicToAccount", () => {
    for (const i of [0, 1, 7]) {
      assert.equal(deriver.evmAddress(`m/44'/60'/0'/0/${i}`), mnemonicToAccount(ABANDON, { addressIndex: i }).address);
    }
    assert.equal(deriver.evmAddress(), mnemonicToAccount(ABANDON).address);
    const path = "m/44'/60'/3'/1/9";
    assert.equal(deriver.evmAddress(path), mnemonicToAccount(ABANDON, { path }).address);
  });

  await t.step("every derived deposit address passes destination validation", () => {
    for (const chain of NATIVE_CHAINS) {
      for (const i of INDEXES) assert.equal(destinationAddressError(chain, deriver.depositAddress(chain, i)), null);
    }
  });
});

Deno.test("derivation: input checks and secrecy", async (t) => {
  await t.step("a bad mnemonic throws one fixed message that does not echo it", () => {
    const bad = [
      "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon", // checksum
      "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abouty", // unknown word
      "abandon abandon abandon",
      "",
      undefined as unknown as string,
    ];
    for (const mnemonic of bad) {
      assert.throws(() => Deriver.fromMnemonic(mnemonic), (e: unknown) => {
        assert.ok(e instanceof Error);
        assert.equal(e.message, "Invalid master mnemonic");
        assert.ok(!String(e.stack).includes("abandon"));
        return true;
      });
    }
  });

  await t.step("surrounding and repeated whitespace is normalized", () => {
    const messy = Deriver.fromMnemonic(`  ${ABANDON.replaceAll(" ", "  ")}\n`);
    assert.equal(messy.evmAddress(), mnemonicToAccount(ABANDON).address);
    assert.equal(messy.depositAddress("sol", 0), "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk");
  });

  await t.step("index must be an integer in 0..2^31-1", () => {
    const deriver = Deriver.fromMnemonic(ABANDON);
    for (const chain of NATIVE_CHAINS) {
      for (const index of [-1, 1.5, 2 ** 31, NaN, Infinity, "0" as unknown as number]) {
        assert.throws(() => deriver.depositAddress(chain, index), RangeError, `${chain} ${index}`);
      }
    }
    assert.throws(() => deriver.depositAddress("btc" as never, 0), /Unknown native chain/);
  });

  await t.step("an invalid EVM path throws", () => {
    assert.throws(() => Deriver.fromMnemonic(ABANDON).evmAddress("m/44'/60'/x"));
  });

  await t.step("no private key, chain code or mnemonic is reachable from the instance", () => {
    const deriver = Deriver.fromMnemonic(ABANDON);
    deriver.depositAddress("sol", 0);
    deriver.evmAddress();
    const seed = mnemonicToSeedSync(ABANDON);
    const secrets = [
      hex(Slip10Key.fromMasterSeed(seed).derive("m/44'/501'").privateKey),
      hex(Slip10Key.fromMasterSeed(seed).derive("m/44'/784'/0'/0'").privateKey),
      hex(utxolib.bip32.fromSeed(Buffer.from(seed)).privateKey!),
      hex(utxolib.bip32.fromSeed(Buffer.from(seed)).derivePath("m/44'/144'/0'/0").chainCode),
      "abandon",
    ];
    const views = [
      JSON.stringify(deriver),
      JSON.stringify({ deriver }),
      Deno.inspect(deriver, { showHidden: true, depth: 10 }),
      String(deriver),
      Object.getOwnPropertyNames(deriver).join(","),
    ];
    for (const view of views) for (const secret of secrets) assert.ok(!view.includes(secret), view);
    assert.deepEqual(Object.keys(deriver), []);
  });
});

Deno.test("derivation: doge and zec deposit addresses in the chain plan's network", async (t) => {
  const seed = mnemonicToSeedSync(ABANDON);
  const root = utxolib.bip32.fromSeed(Buffer.from(seed));
  const mainnet = Deriver.fromMnemonic(ABANDON);
  const regtest = Deriver.fromMnemonic(ABANDON, { doge: "regtest", zec: "regtest" });

  await t.step("mainnet is the default and unchanged by naming it", () => {
    const named = Deriver.fromMnemonic(ABANDON, { doge: "mainnet", zec: "mainnet" });
    for (const chain of NATIVE_CHAINS) {
      for (const i of INDEXES) assert.equal(named.depositAddress(chain, i), mainnet.depositAddress(chain, i));
    }
    assert.equal(mainnet.depositAddress("doge", 0), "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC");
  });

  await t.step(
    "doge regtest: bitcoinjs-lib p2pkh with version 111 (Bitcoin testnet/regtest's, Dogecoin regtest's)",
    () => {
      for (const i of INDEXES) {
        const pubkey = root.derivePath(`m/44'/3'/0'/0/${i}`).publicKey;
        const expected = bitcoin.payments.p2pkh({ pubkey, network: bitcoin.networks.regtest }).address!;
        assert.equal(regtest.depositAddress("doge", i), expected, `index ${i}`);
        assert.match(expected, /^[mn]/);
        assert.equal(destinationAddressError("doge", expected, "regtest"), null);
      }
    },
  );

  await t.step("zec regtest: @bitgo/utxo-lib's zcash testnet encoding, t-addresses beginning tm", () => {
    for (const i of INDEXES) {
      const pubkey = root.derivePath(`m/44'/133'/0'/0/${i}`).publicKey;
      const output = utxolib.payments.p2pkh({ pubkey }).output!;
      const expected = utxolib.address.fromOutputScript(output, utxolib.networks.zcashTest);
      assert.equal(regtest.depositAddress("zec", i), expected, `index ${i}`);
      assert.match(expected, /^tm/);
      assert.equal(destinationAddressError("zec", expected, "regtest"), null);
    }
  });

  await t.step("only doge and zec change with the network", () => {
    for (const chain of ["sol", "xrp", "sui"] as const) {
      assert.equal(regtest.depositAddress(chain, 5), mainnet.depositAddress(chain, 5));
    }
    const one = Deriver.fromMnemonic(ABANDON, { doge: "regtest" });
    assert.match(one.depositAddress("doge", 0), /^[mn]/);
    assert.equal(one.depositAddress("zec", 0), mainnet.depositAddress("zec", 0));
  });

  await t.step("the Signer's address is the Deriver's, on either network", () => {
    for (const networks of [{}, { doge: "regtest", zec: "regtest" }] as const) {
      const deriver = Deriver.fromMnemonic(ABANDON, networks);
      const signer = Signer.fromMnemonic(ABANDON, networks);
      for (const chain of ["doge", "zec"] as const) {
        for (const i of [0, 1, 1000]) assert.equal(signer.address(chain, i), deriver.depositAddress(chain, i));
      }
    }
  });

  await t.step("the change key is BIP44's internal chain: its address is no deposit address", () => {
    const signer = Signer.fromMnemonic(ABANDON);
    for (const chain of ["doge", "zec"] as const) {
      const change = publicKeyToAddress(chain, signer.publicKey(chain, 0, "change"));
      const coin = chain === "doge" ? 3 : 133;
      const expected = root.derivePath(`m/44'/${coin}'/0'/1/0`).publicKey;
      assert.equal(hex(signer.publicKey(chain, 0, "change")), hex(expected));
      for (let i = 0; i < 200; i++) assert.notEqual(mainnet.depositAddress(chain, i), change, `${chain} ${i}`);
    }
  });
});
