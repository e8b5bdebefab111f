/**
 * Key and mnemonic files that group or others can access are refused at start (ISSUE item 12), naming the variable,
 * the path and the mode, and saying how to fix it. The service is started as a child process, as an operator would.
 */
import assert from "node:assert/strict";
import { generateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { readMinterKey } from "../config/evm.ts";
import { newPrivateKeyPem } from "../config/secrets.ts";
import { tryStartService } from "./support/cli.ts";

const MINTER_KEY = "0x" + "ab".repeat(32);

async function secretFile(dir: string, name: string, content: string, mode: number): Promise<string> {
  const path = `${dir}/${name}`;
  await Deno.writeTextFile(path, content);
  await Deno.chmod(path, mode); // exact, whatever the umask
  return path;
}

function refusal(variable: string, path: string, mode: string): RegExp {
  const p = path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`${variable} names ${p}, whose mode ${mode} lets group or others access it.*chmod 600 ${p}`);
}

Deno.test("start refuses JWT_PRIVATE_KEY_FILE and MASTER_MNEMONIC_FILE readable by group or others", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "secret-modes-" });
  try {
    const secrets = {
      JWT_PRIVATE_KEY_FILE: await newPrivateKeyPem(),
      MASTER_MNEMONIC_FILE: generateMnemonic(wordlist, 256) + "\n",
    };
    for (const [variable, content] of Object.entries(secrets)) {
      await t.step(`${variable} with mode 0644 is refused; 0600 starts`, async () => {
        const path = await secretFile(dir, variable.toLowerCase(), content, 0o644);
        const env = { KV_PATH: `${dir}/${variable}/kv.sqlite3`, [variable]: path };
        const refused = await tryStartService(env);
        assert.equal(refused.started, false, refused.output);
        assert.notEqual(refused.code, 0);
        assert.match(refused.output, refusal(variable, path, "0644"));
        await Deno.chmod(path, 0o600);
        const accepted = await tryStartService(env);
        assert.equal(accepted.started, true, accepted.output);
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("EVM key files (minter, deployer) readable by group or others are refused", async () => {
  const dir = await Deno.makeTempDir({ prefix: "secret-modes-" });
  try {
    for (const mode of [0o644, 0o640, 0o604, 0o660, 0o601]) {
      const octal = "0" + mode.toString(8);
      const path = await secretFile(dir, `minter-${octal}`, MINTER_KEY, mode);
      await assert.rejects(readMinterKey(path), refusal("EVM_MINTER_KEY_FILE", path, octal));
      await assert.rejects(readMinterKey(path, "EVM_DEPLOYER_KEY_FILE"), refusal("EVM_DEPLOYER_KEY_FILE", path, octal));
    }
    for (const mode of [0o600, 0o400]) {
      const path = await secretFile(dir, `minter-ok-${mode.toString(8)}`, MINTER_KEY, mode);
      assert.equal(await readMinterKey(path), MINTER_KEY);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
