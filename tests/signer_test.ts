/**
 * The signer signs by (chain, derivation index) with the keys chains/derivation.ts derives, and never shows a key:
 * signatures verify with @noble/curves against the derived public key and with the chains' own libraries (xrpl,
 * @solana/kit, viem), and neither JSON nor inspection of a Signer reveals key material.
 */
import assert from "node:assert/strict";
import { deriveAddress, verifyKeypairSignature } from "xrpl";
import { getPublicKeyFromAddress, signatureBytes, verifySignature } from "@solana/kit";
import { recoverAddress, serializeSignature, toHex } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { mnemonicToSeedSync } from "@scure/bip39";
import { HDKey } from "@scure/bip32";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { ed25519 } from "@noble/curves/ed25519.js";
import { sha256, sha512 } from "@noble/hashes/sha2.js";
import { Deriver, HOT_WALLET_PATHS, hotWalletPath, slip10Ed25519PublicKey } from "../chains/derivation.ts";
import { Signer } from "../chains/signer.ts";

const TEST_JUNK = "test test test test test test test test test test test junk";
const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
const MESSAGE = new TextEncoder().encode("sweep 42 to the hot wallet");

Deno.test("signer: addresses are the deposit addresses, for every native chain and index", () => {
  const signer = Signer.fromMnemonic(TEST_JUNK);
  const deriver = Deriver.fromMnemonic(TEST_JUNK);
  for (const chain of ["sol", "sui", "xrp", "doge", "zec"] as const) {
    for (const index of [0, 1, 7, 2 ** 31 - 1]) {
      assert.equal(signer.address(chain, index), deriver.depositAddress(chain, index), `${chain} ${index}`);
    }
  }
  assert.equal(signer.address("base", 0), deriver.evmAddress());
  assert.equal(signer.address("base", 3), mnemonicToAccount(TEST_JUNK, { addressIndex: 3 }).address);
});

Deno.test("signer: doge and xrp DER signatures of a digest verify against the derived key (noble, xrpl)", () => {
  const signer = Signer.fromMnemonic(TEST_JUNK);
  for (const chain of ["doge", "zec", "xrp"] as const) {
    const digest = sha256(MESSAGE);
    const sig = signer.signDigest(chain, 5, digest);
    assert.equal(sig.format, "der");
    const publicKey = signer.publicKey(chain, 5);
    assert.ok(secp256k1.verify(sig.bytes, digest, publicKey, { prehash: false, format: "der", lowS: true }), chain);
    // Signed as given, never hashed again: the same signature does not verify for sha256(digest).
    assert.ok(!secp256k1.verify(sig.bytes, sha256(digest), publicKey, { prehash: false, format: "der" }));
    // Another index's key does not verify it.
    assert.ok(!secp256k1.verify(sig.bytes, digest, signer.publicKey(chain, 6), { prehash: false, format: "der" }));
  }
  // XRPL signs SHA-512Half of the data; xrpl's own verification (ripple-keypairs) hashes the message itself.
  const pub = hex(signer.publicKey("xrp", 9)).toUpperCase();
  const sig = signer.signDigest("xrp", 9, sha512(MESSAGE).slice(0, 32));
  assert.ok(verifyKeypairSignature(hex(MESSAGE), hex(sig.bytes).toUpperCase(), pub));
  assert.equal(deriveAddress(pub), signer.address("xrp", 9));
});

Deno.test("signer: EVM signatures are r||s with a recovery id that viem recovers to the account", async () => {
  const signer = Signer.fromMnemonic(TEST_JUNK);
  const digest = sha256(MESSAGE);
  const sig = signer.signDigest("base", 2, digest);
  assert.equal(sig.format, "recoverable");
  if (sig.format !== "recoverable") return;
  assert.equal(sig.bytes.length, 64);
  const signature = serializeSignature({
    r: toHex(sig.bytes.slice(0, 32)),
    s: toHex(sig.bytes.slice(32)),
    yParity: sig.recovery,
  });
  assert.equal(await recoverAddress({ hash: toHex(digest), signature }), signer.address("base", 2));
  assert.equal(signer.address("base", 2), mnemonicToAccount(TEST_JUNK, { addressIndex: 2 }).address);
});

Deno.test("signer: ed25519 signatures verify (noble for sol and sui, @solana/kit for sol)", async () => {
  const signer = Signer.fromMnemonic(TEST_JUNK);
  for (const chain of ["sol", "sui"] as const) {
    const sig = signer.signMessage(chain, 4, MESSAGE);
    assert.equal(sig.length, 64);
    assert.ok(ed25519.verify(sig, MESSAGE, signer.publicKey(chain, 4)), chain);
    assert.ok(!ed25519.verify(sig, MESSAGE, signer.publicKey(chain, 5)), chain);
  }
  const sig = signer.signMessage("sol", 11, MESSAGE);
  const key = await getPublicKeyFromAddress(signer.address("sol", 11) as Parameters<typeof getPublicKeyFromAddress>[0]);
  assert.ok(await verifySignature(key, signatureBytes(sig), MESSAGE));
});

Deno.test("signer: refuses a wrong digest, index or chain without signing", () => {
  const signer = Signer.fromMnemonic(TEST_JUNK);
  assert.throws(() => signer.signDigest("doge", 0, new Uint8Array(31)), /32-byte digest/);
  assert.throws(() => signer.signDigest("doge", -1, new Uint8Array(32)), RangeError);
  assert.throws(() => signer.signMessage("sol", 2 ** 31, MESSAGE), RangeError);
  // deno-lint-ignore no-explicit-any
  assert.throws(() => signer.signDigest("sol" as any, 0, new Uint8Array(32)), /No secp256k1 key/);
  // deno-lint-ignore no-explicit-any
  assert.throws(() => signer.signMessage("doge" as any, 0, MESSAGE), /No ed25519 key/);
  assert.throws(() => Signer.fromMnemonic("not a mnemonic at all"), /Invalid master mnemonic/);
});

Deno.test("signer: JSON, inspection and property enumeration show no key material", () => {
  const signer = Signer.fromMnemonic(TEST_JUNK);
  const seed = mnemonicToSeedSync(TEST_JUNK);
  const master = HDKey.fromMasterSeed(seed);
  // Secrets it must never show, in the encodings a leak would take: the private keys and xprvs of the parents and of
  // a child it has signed with.
  const secrets: string[] = [];
  for (const path of ["m/44'/3'/0'/0", "m/44'/144'/0'/0", "m/44'/60'/0'/0", "m/44'/3'/0'/0/0"]) {
    const node = master.derive(path);
    secrets.push(hex(node.privateKey!), node.privateExtendedKey);
  }
  signer.signDigest("doge", 0, new Uint8Array(32).fill(1));
  signer.signMessage("sol", 0, MESSAGE);
  const shown = [
    JSON.stringify(signer),
    JSON.stringify({ signer }),
    Deno.inspect(signer, { showHidden: true, depth: 10 }),
    Deno.inspect({ signer }, { showHidden: true, depth: 10 }),
    String(Object.keys(signer)),
    String(Object.getOwnPropertyNames(signer)),
    String(signer),
  ];
  for (const text of shown) {
    for (const secret of secrets) assert.ok(!text.includes(secret), `leaked in ${text.slice(0, 60)}`);
    assert.ok(!/[0-9a-f]{64}/i.test(text), `no 32-byte hex in ${text.slice(0, 60)}`);
  }
  // No own property at all: nothing a spread, Object.assign or a logger walking properties could copy out.
  assert.deepEqual(Reflect.ownKeys(signer), []);
  assert.equal(JSON.stringify(signer), '"[Signer]"');
  assert.equal(Deno.inspect(signer), "Signer {}");
});

Deno.test("signer: each account chain's hot wallet is its own key at HOT_WALLET_PATHS, never a deposit key", () => {
  const signer = Signer.fromMnemonic(TEST_JUNK);
  const deriver = Deriver.fromMnemonic(TEST_JUNK);
  const seed = mnemonicToSeedSync(TEST_JUNK);
  // xrp: BIP32 at m/44'/144'/1'/0/0, checked with @scure/bip32 and xrpl's own address derivation.
  const xrpKey = HDKey.fromMasterSeed(seed).derive(HOT_WALLET_PATHS.xrp).publicKey!;
  assert.deepEqual(signer.publicKey("xrp", 0, "hot"), xrpKey);
  assert.equal(signer.address("xrp", 0, "hot"), deriveAddress(toHex(xrpKey).slice(2).toUpperCase()));
  for (const chain of ["sol", "sui", "xrp"] as const) {
    const hot = signer.address(chain, 0, "hot");
    assert.equal(signer.address(chain, 0, "hot"), hot, "stable: the key is not consumed by use");
    for (let i = 0; i < 20; i++) assert.notEqual(hot, deriver.depositAddress(chain, i), `${chain} deposit ${i}`);
    // A rotated hot wallet (docs/operations.md "Rotating a hot wallet") is index 1 of the same branch: another key, no
    // deposit's.
    const next = signer.address(chain, 1, "hot");
    assert.notEqual(next, hot);
    for (let i = 0; i < 20; i++) assert.notEqual(next, deriver.depositAddress(chain, i), `${chain} deposit ${i}`);
  }
  // Index i is hotWalletPath(chain, i), checked against the libraries' own derivation; index 0 is HOT_WALLET_PATHS.
  assert.equal(hotWalletPath("xrp", 0), HOT_WALLET_PATHS.xrp);
  assert.equal(hotWalletPath("sol", 0), HOT_WALLET_PATHS.sol);
  assert.equal(hotWalletPath("sui", 0), HOT_WALLET_PATHS.sui);
  assert.deepEqual(
    signer.publicKey("xrp", 3, "hot"),
    HDKey.fromMasterSeed(seed).derive(hotWalletPath("xrp", 3)).publicKey!,
  );
  for (const chain of ["sol", "sui"] as const) {
    assert.deepEqual(signer.publicKey(chain, 3, "hot"), slip10Ed25519PublicKey(seed, hotWalletPath(chain, 3)));
  }
  // ed25519 hot keys sign and verify; the stored key survives signing (a copy is zeroed, not the original).
  const message = new TextEncoder().encode("hot wallet");
  for (const chain of ["sol", "sui"] as const) {
    const sig = signer.signMessage(chain, 0, message, "hot");
    assert.ok(ed25519.verify(sig, message, signer.publicKey(chain, 0, "hot")));
    assert.deepEqual(signer.signMessage(chain, 0, message, "hot"), sig, "deterministic: the key is intact");
  }
  const digest = sha256(message);
  const der = signer.signDigest("xrp", 0, digest, "hot");
  assert.equal(der.format, "der");
  assert.ok(secp256k1.verify(der.bytes, digest, xrpKey, { prehash: false, format: "der" }));
  assert.throws(() => signer.publicKey("doge", 0, "hot"), /hot wallet/);
});
