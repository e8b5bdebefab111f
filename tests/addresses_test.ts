import assert from "node:assert/strict";
import * as bitcoin from "bitcoinjs-lib";
import * as utxolib from "@bitgo/utxo-lib";
import { classicAddressToXAddress, isValidClassicAddress } from "xrpl";
import { destinationAddressError, isEvmAddress, xrpBase58check } from "../chains/addresses.ts";
import type { NativeChain } from "../chains/catalog.ts";

const MESSAGE: Record<NativeChain, string> = {
  sol: "Invalid Solana address format. Must be base58 encoded, 32-44 characters.",
  xrp: "Invalid XRP address format. Must be a classic address starting with r, 25-34 characters.",
  sui: "Invalid Sui address format. Must be 0x followed by 64 hexadecimal characters.",
  doge: "Invalid Dogecoin address format. Must start with D, A or 9 and be 34 characters.",
  zec: "Invalid Zcash address format. Must be a transparent address starting with t1, 35 characters.",
};

/** Changes one character to another base58 character, keeping length and alphabet (a checksum typo). */
function flip(address: string, at: number): string {
  const c = address[at];
  return address.slice(0, at) + (c === "x" ? "y" : "x") + address.slice(at + 1);
}

function assertValid(chain: NativeChain, addresses: string[]) {
  for (const a of addresses) assert.equal(destinationAddressError(chain, a), null, `${chain} ${a}`);
}

function assertInvalid(chain: NativeChain, addresses: string[]) {
  for (const a of addresses) assert.equal(destinationAddressError(chain, a), MESSAGE[chain], `${chain} ${a}`);
}

Deno.test("destinationAddressError", async (t) => {
  await t.step("sol", () => {
    const valid = [
      "11111111111111111111111111111111", // System Program, 32 zero bytes
      "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", // SPL Token program
      "So11111111111111111111111111111111111111112", // wrapped SOL mint
      "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", // USDC mint, 44 characters
      "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk",
    ];
    assertValid("sol", valid);
    assertInvalid("sol", [
      "",
      "1111111111111111111111111111111", // 31 characters
      "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1vX", // 45 characters
      "0PjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", // 0
      "OPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", // O
      "IPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", // I
      "lPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", // l
      " EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
      "22222222222222222222222222222222", // right pattern, decodes to fewer than 32 bytes
      "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", // right pattern, decodes to more than 32 bytes
      "0x5e93a736d04fbb25737aa40bee40171ef79f65fae833749e3c089fe7cc2161f1",
    ]);
  });

  await t.step("xrp", () => {
    const valid = [
      "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh", // the genesis account
      "rrrrrrrrrrrrrrrrrrrrrhoLvTp", // ACCOUNT_ZERO
      "rrrrrrrrrrrrrrrrrrrrBZbvji", // ACCOUNT_ONE, 26 characters
      "rNaqKtKrMSwpwZSzRckPf7S96DkimjkF4H",
      "rJHMeqKu8Ep7Fazx8MQG6JunaafBXz93YQ",
    ];
    assertValid("xrp", valid);
    for (const a of valid) assert.ok(isValidClassicAddress(a), `xrpl agrees ${a}`);
    const nineteenBytes = xrpBase58check.encode(Uint8Array.of(0x00, ...new Uint8Array(19).fill(7))); // version 0x00 + 19-byte payload
    assert.match(nineteenBytes, /^r[1-9A-HJ-NP-Za-km-z]{24,33}$/);
    const invalid = [
      "",
      flip("rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh", 10), // checksum typo
      flip("rNaqKtKrMSwpwZSzRckPf7S96DkimjkF4H", 33),
      "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyT", // truncated
      "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyThh", // 35 characters
      "rHb9CJAWyB4rj91VRWn96DkukG4bwdty0h", // 0
      "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyOh", // O
      "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyIh", // I
      "rHb9CJAWyB4rj91VRWn96DkukG4bwdtylh", // l
      classicAddressToXAddress("rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh", false, false), // X-address
      classicAddressToXAddress("rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh", 12345, false),
      "1HB5XMLmzFVj8ALj6mfBsbifRoD4miY36v", // bitcoin-alphabet encoding of a similar payload
      nineteenBytes,
    ];
    for (const a of invalid.slice(1)) assert.ok(!isValidClassicAddress(a), `xrpl agrees ${a}`);
    assertInvalid("xrp", invalid);
  });

  await t.step("sui", () => {
    assertValid("sui", [
      "0x0000000000000000000000000000000000000000000000000000000000000002", // the Sui framework
      "0xa2d14fad60c56049ecf75246a481934691214ce413e6a8ae2fe6834c173a6133",
      "0xA2D14FAD60C56049ECF75246A481934691214CE413E6A8AE2FE6834C173A6133",
    ]);
    assertInvalid("sui", [
      "",
      "0x2", // the short form is not accepted for payouts
      "0xa2d14fad60c56049ecf75246a481934691214ce413e6a8ae2fe6834c173a613", // 63 hex
      "0xa2d14fad60c56049ecf75246a481934691214ce413e6a8ae2fe6834c173a61330", // 65 hex
      "a2d14fad60c56049ecf75246a481934691214ce413e6a8ae2fe6834c173a6133aa", // no 0x
      "0Xa2d14fad60c56049ecf75246a481934691214ce413e6a8ae2fe6834c173a6133",
      "0xg2d14fad60c56049ecf75246a481934691214ce413e6a8ae2fe6834c173a6133",
      "0x9858EfFD232B4033E47d90003D41EC34EcaEda94", // an EVM address
    ]);
  });

  await t.step("doge", () => {
    const p2sh = (fill: number) => bitcoin.address.toBase58Check(new Uint8Array(20).fill(fill), 0x16);
    const valid = [
      "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC",
      "DNRTC6GZ5evmM7BZWwPqF54fyDqUqULMyu",
      "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L", // Dogecoin Core dev fund address
      p2sh(0x00), // P2SH, starts with 9
      p2sh(0xff), // P2SH, starts with A
    ];
    assert.match(valid[3], /^9/);
    assert.match(valid[4], /^A/);
    assertValid("doge", valid);
    const wrongVersionA = bitcoin.address.toBase58Check(new Uint8Array(20), 0x17); // checksum fine, version not Dogecoin
    assert.match(wrongVersionA, /^A[1-9A-HJ-NP-Za-km-z]{33}$/);
    assertInvalid("doge", [
      "",
      flip("DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC", 12), // checksum typo
      flip("DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC", 33),
      "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxg", // 33 characters
      "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgCC", // 35 characters
      "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxg0", // 0
      "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgO", // O
      "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgI", // I
      "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgl", // l
      "1JAd7XCBzGudGpJQSDSfpmJhiygtLQWaGL", // bitcoin
      "LcubERmHD31PWup1fbozpKuiqjHZ4anxcL", // litecoin
      "nhA8G4Ds2nam712vnLiXitLAyLhLHhL9M6", // dogecoin testnet
      wrongVersionA,
    ]);
  });

  await t.step("zec", () => {
    const t3 = utxolib.address.toBase58Check(
      Buffer.alloc(20, 1),
      utxolib.networks.zcash.scriptHash,
      utxolib.networks.zcash,
    );
    assert.match(t3, /^t3/);
    const valid = [
      "t1XVXWCvpMgBvUaed4XDqWtgQgJSu1Ghz7F",
      "t1b9xfAk3kZp5Qk3rinDPq7zzLkJGHTChDS",
      "t1fhcesXQLT3U1t7caBYTpd59LiRV8tVfqj",
      "t1N5zTV5PjJqRgSPmszHopk88Nc6mvMBSD7",
    ];
    assertValid("zec", valid);
    for (const a of valid) {
      assert.doesNotThrow(() => utxolib.address.toOutputScript(a, utxolib.networks.zcash), `utxo-lib agrees ${a}`);
    }
    assertInvalid("zec", [
      "",
      flip("t1XVXWCvpMgBvUaed4XDqWtgQgJSu1Ghz7F", 15), // checksum typo
      flip("t1XVXWCvpMgBvUaed4XDqWtgQgJSu1Ghz7F", 34),
      "t1XVXWCvpMgBvUaed4XDqWtgQgJSu1Ghz7", // 34 characters
      "t1XVXWCvpMgBvUaed4XDqWtgQgJSu1Ghz7FF", // 36 characters
      "t1XVXWCvpMgBvUaed4XDqWtgQgJSu1Ghz70", // 0
      "t1XVXWCvpMgBvUaed4XDqWtgQgJSu1GhzOF", // O
      "t1XVXWCvpMgBvUaed4XDqWtgQgJSu1GhzIF", // I
      "t1XVXWCvpMgBvUaed4XDqWtgQgJSu1Ghzl7", // l
      t3, // transparent P2SH: not offered
      "tmJ1xYxP8XNTtCoDgvdmQPSrxh5qZJgy65Z", // testnet
      "zs1z7rejlpsa98s2rrrfkwmaxu53e4ue0ulcrw0h4x5g8jl04tak0d3mm47vdtahatqrlkngh9slya", // Sapling (shielded)
      "zcU1Cd6zYyZCd2VJF8yKgmzjxdiiU1rgTTjEwoN1CGUWCziPkUTXUjXmX7TMqdMNsTfuiGN1jQoVN4kGxUR4sAPN4XZ7pxb", // Sprout
      "u1ddnjsdcpm36r6aq79n3s68shjweksnmwtdltrh046s8m6xcws9ygyawalxx8n6hg6vegk0wh8zjnafxgh6msppjsljvyt0ynece3lvm0", // unified
      "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC",
    ]);
  });

  await t.step("a non-string address gets the chain's message", () => {
    assert.equal(destinationAddressError("sol", undefined as unknown as string), MESSAGE.sol);
    assert.equal(destinationAddressError("xrp", 12 as unknown as string), MESSAGE.xrp);
  });

  await t.step("an unknown chain is a programming error", () => {
    assert.throws(() => destinationAddressError("btc" as NativeChain, "1JAd7XCBzGudGpJQSDSfpmJhiygtLQWaGL"));
    assert.throws(() => destinationAddressError("constructor" as NativeChain, "x"));
  });
});

Deno.test("isEvmAddress", async (t) => {
  await t.step("0x and 40 hex digits in any case", () => {
    for (
      const a of [
        "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
        "0x9858effd232b4033e47d90003d41ec34ecaeda94",
        "0x9858EFFD232B4033E47D90003D41EC34ECAEDA94",
        "0x9858efFD232B4033E47d90003D41EC34EcaEda94", // wrong EIP-55 checksum is still accepted
        "0x0000000000000000000000000000000000000000",
      ]
    ) assert.equal(isEvmAddress(a), true, a);
  });

  await t.step("anything else", () => {
    for (
      const a of [
        "",
        "0x",
        "9858EfFD232B4033E47d90003D41EC34EcaEda94",
        "0X9858EfFD232B4033E47d90003D41EC34EcaEda94",
        "0x9858EfFD232B4033E47d90003D41EC34EcaEda9",
        "0x9858EfFD232B4033E47d90003D41EC34EcaEda944",
        "0x9858EfFD232B4033E47d90003D41EC34EcaEda9g",
        " 0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
        "0x9858EfFD232B4033E47d90003D41EC34EcaEda94\n",
        "0xa2d14fad60c56049ecf75246a481934691214ce413e6a8ae2fe6834c173a6133",
      ]
    ) assert.equal(isEvmAddress(a), false, JSON.stringify(a));
    assert.equal(isEvmAddress(undefined as unknown as string), false);
  });
});

Deno.test("destinationAddressError per network: regtest takes that network's addresses, mainnet keeps the spec's", async (t) => {
  // Keys and scripts from independent libraries: bitcoinjs-lib (regtest: P2PKH 111 "m"/"n", P2SH 196 "2", which
  // Dogecoin's regtest shares) and @bitgo/utxo-lib (zcash testnet/regtest: "tm", "t2").
  const pubkey = Buffer.from("0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798", "hex");
  const hash = Buffer.alloc(20, 7);
  const dogeRegtest = [
    bitcoin.payments.p2pkh({ pubkey, network: bitcoin.networks.regtest }).address!,
    bitcoin.payments.p2pkh({ hash, network: bitcoin.networks.regtest }).address!,
    bitcoin.payments.p2sh({ hash, network: bitcoin.networks.regtest }).address!,
    "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn", // a published Bitcoin testnet address; litecoind regtest validates it
  ];
  const zecRegtest = [
    utxolib.address.fromOutputScript(utxolib.payments.p2pkh({ pubkey }).output!, utxolib.networks.zcashTest),
    utxolib.address.fromOutputScript(utxolib.payments.p2sh({ hash }).output!, utxolib.networks.zcashTest),
  ];
  const dogeMainnet = "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC";
  const zecMainnet = "t1XVXWCvpMgBvUaed4XDqWtgQgJSu1Ghz7F";

  await t.step("doge regtest: m/n/2 accepted; mainnet, typos and other chains refused with the spec's message", () => {
    assert.match(dogeRegtest[0], /^[mn]/);
    assert.match(dogeRegtest[2], /^2/);
    for (const a of dogeRegtest) assert.equal(destinationAddressError("doge", a, "regtest"), null, a);
    for (const a of [dogeMainnet, flip(dogeRegtest[0], 10), zecRegtest[0], "", "m", 7 as unknown as string]) {
      assert.equal(destinationAddressError("doge", a, "regtest"), MESSAGE.doge, String(a));
    }
  });

  await t.step("zec regtest: tm/t2 accepted; t1 and typos refused", () => {
    assert.match(zecRegtest[0], /^tm/);
    assert.match(zecRegtest[1], /^t2/);
    for (const a of zecRegtest) assert.equal(destinationAddressError("zec", a, "regtest"), null, a);
    for (const a of [zecMainnet, flip(zecRegtest[0], 12), dogeRegtest[0]]) {
      assert.equal(destinationAddressError("zec", a, "regtest"), MESSAGE.zec, a);
    }
  });

  await t.step("mainnet (the default) refuses regtest addresses and accepts its own", () => {
    for (const a of dogeRegtest) assert.equal(destinationAddressError("doge", a, "mainnet"), MESSAGE.doge, a);
    for (const a of zecRegtest) assert.equal(destinationAddressError("zec", a), MESSAGE.zec, a);
    assert.equal(destinationAddressError("doge", dogeMainnet, "mainnet"), null);
    assert.equal(destinationAddressError("zec", zecMainnet, "mainnet"), null);
  });

  await t.step("the network changes nothing for account chains", () => {
    assert.equal(destinationAddressError("sol", "11111111111111111111111111111111", "regtest"), null);
    assert.equal(destinationAddressError("xrp", dogeRegtest[0], "regtest"), MESSAGE.xrp);
  });
});
