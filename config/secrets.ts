/**
 * The two operator secrets: the JWT signing key and the master mnemonic. They come from files named by the
 * environment; in sim mode a missing one is generated once into the data folder (with a warning) so that
 * `deno task dev` needs nothing. Live mode refuses to start without them. Secrets never reach KV or logs.
 *
 * Deploy mode (RUNTIME_MODE=deploy, Deno Deploy) reads them from the environment itself (`JWT_PRIVATE_KEY`, the PEM
 * text, and `MASTER_MNEMONIC`), in every chain mode: nothing is generated and no file is read or written there.
 */
import { calculateJwkThumbprint, exportJWK, exportPKCS8, generateKeyPair, importPKCS8, type JWK } from "jose";
import { generateMnemonic, validateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import type { Config } from "./env.ts";
import { readSecretFile } from "./secret_file.ts";

export interface JwtKeys {
  privateKey: CryptoKey;
  /** Public half as a JWK with `kid`, `alg` and `use`, as published in the JWKS. */
  publicJwk: JWK & { kid: string };
  /** Public half as a CryptoKey for verification. */
  publicKey: CryptoKey;
}

export interface Secrets {
  jwt: JwtKeys;
  mnemonic: string;
}

/**
 * ROLE=api's secrets (docs/operations.md "Roles"): the JWT key alone; config/env.ts refused every other key already.
 */
export interface ApiSecrets {
  jwt: JwtKeys;
}

/**
 * ROLE=worker's secrets (docs/operations.md "Roles"): the mnemonic alone; it serves no partner route, so signs no
 * token.
 */
export interface WorkerSecrets {
  mnemonic: string;
}

const GENERATED_KEY_FILE = "jwt-private-key.pem";
const GENERATED_MNEMONIC_FILE = "master-mnemonic.txt";

/**
 * The JWT key only, read as `loadSecrets` reads it (deploy: `JWT_PRIVATE_KEY`; live: `JWT_PRIVATE_KEY_FILE`
 * required; sim: generated once). No mnemonic is read, generated or held.
 */
export async function loadApiSecrets(
  config: Config,
  warn: (msg: string) => void = console.warn,
): Promise<ApiSecrets> {
  if (config.runtimeMode === "deploy") {
    if (!config.jwtPrivateKey) {
      throw new Error("RUNTIME_MODE=deploy needs JWT_PRIVATE_KEY in the environment: refusing to start without it");
    }
    return { jwt: await jwtKeysFromPem(config.jwtPrivateKey.replaceAll("\\n", "\n")) };
  }
  if (config.chainMode === "live" && !config.jwtPrivateKeyFile) {
    throw new Error("CHAIN_MODE=live needs JWT_PRIVATE_KEY_FILE: refusing to start without it");
  }
  return { jwt: await jwtKeysFromPem(await jwtPem(config, warn)) };
}

function jwtPem(config: Config, warn: (msg: string) => void): Promise<string> {
  return config.jwtPrivateKeyFile
    ? readSecretFile(config.jwtPrivateKeyFile, "JWT_PRIVATE_KEY_FILE")
    : generatedOnce(`${config.dataDir}/${GENERATED_KEY_FILE}`, newPrivateKeyPem, warn, "JWT signing key");
}

/**
 * The master mnemonic only, read as `loadSecrets` reads it (deploy: `MASTER_MNEMONIC`; live: `MASTER_MNEMONIC_FILE`
 * required; sim: generated once). No JWT key is read, generated or held.
 */
export async function loadWorkerSecrets(
  config: Config,
  warn: (msg: string) => void = console.warn,
): Promise<WorkerSecrets> {
  if (config.runtimeMode === "deploy") {
    if (!config.masterMnemonic) {
      throw new Error("RUNTIME_MODE=deploy needs MASTER_MNEMONIC in the environment: refusing to start without it");
    }
    const mnemonic = config.masterMnemonic.trim().split(/\s+/).join(" ");
    if (!validateMnemonic(mnemonic, wordlist)) throw new Error("MASTER_MNEMONIC is not a valid BIP39 English mnemonic");
    return { mnemonic };
  }
  if (config.chainMode === "live" && !config.masterMnemonicFile) {
    throw new Error("CHAIN_MODE=live needs MASTER_MNEMONIC_FILE: refusing to start without it");
  }
  return { mnemonic: await mnemonicOf(config, warn) };
}

async function mnemonicOf(config: Config, warn: (msg: string) => void): Promise<string> {
  const mnemonicText = config.masterMnemonicFile
    ? await readSecretFile(config.masterMnemonicFile, "MASTER_MNEMONIC_FILE")
    : await generatedOnce(`${config.dataDir}/${GENERATED_MNEMONIC_FILE}`, newMnemonic, warn, "master mnemonic");
  const mnemonic = mnemonicText.trim().split(/\s+/).join(" ");
  if (!validateMnemonic(mnemonic, wordlist)) {
    throw new Error("The master mnemonic is not a valid BIP39 English mnemonic");
  }
  return mnemonic;
}

export async function loadSecrets(config: Config, warn: (msg: string) => void = console.warn): Promise<Secrets> {
  if (config.runtimeMode === "deploy") return await secretsFromEnvironment(config);
  if (config.chainMode === "live") {
    const missing = [
      config.jwtPrivateKeyFile ? null : "JWT_PRIVATE_KEY_FILE",
      config.masterMnemonicFile ? null : "MASTER_MNEMONIC_FILE",
    ].filter((x) => x !== null);
    if (missing.length > 0) {
      throw new Error(`CHAIN_MODE=live needs ${missing.join(" and ")}: refusing to start without them`);
    }
  }
  const keyPem = await jwtPem(config, warn);
  const mnemonic = await mnemonicOf(config, warn);
  return { jwt: await jwtKeysFromPem(keyPem), mnemonic };
}

/** Deploy mode: both secrets from the environment, or a refusal naming what is missing. Writes nothing. */
async function secretsFromEnvironment(config: Config): Promise<Secrets> {
  const missing = [
    config.jwtPrivateKey ? null : "JWT_PRIVATE_KEY",
    config.masterMnemonic ? null : "MASTER_MNEMONIC",
  ].filter((x) => x !== null);
  if (missing.length > 0) {
    throw new Error(
      `RUNTIME_MODE=deploy needs ${missing.join(" and ")} in the environment (the PEM text and the mnemonic ` +
        "themselves, not files): nothing is generated or written in deploy mode; refusing to start without them",
    );
  }
  const mnemonic = config.masterMnemonic!.trim().split(/\s+/).join(" ");
  if (!validateMnemonic(mnemonic, wordlist)) {
    throw new Error("MASTER_MNEMONIC is not a valid BIP39 English mnemonic");
  }
  // Environments often keep a PEM on one line with literal "\n" sequences.
  const pem = config.jwtPrivateKey!.replaceAll("\\n", "\n");
  return { jwt: await jwtKeysFromPem(pem), mnemonic };
}

export async function jwtKeysFromPem(pem: string): Promise<JwtKeys> {
  let privateKey: CryptoKey;
  try {
    privateKey = await importPKCS8(pem, "RS256", { extractable: true });
  } catch {
    throw new Error("The JWT private key is not an RSA PKCS8 PEM key");
  }
  const jwk = await exportJWK(privateKey);
  const publicOnly: JWK = { kty: jwk.kty, n: jwk.n, e: jwk.e };
  const kid = await calculateJwkThumbprint(publicOnly);
  const publicJwk = { ...publicOnly, kid, alg: "RS256", use: "sig" };
  const publicKey = await crypto.subtle.importKey(
    "jwk",
    publicOnly,
    { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    true,
    ["verify"],
  );
  return { privateKey, publicJwk, publicKey };
}

export async function newPrivateKeyPem(): Promise<string> {
  const { privateKey } = await generateKeyPair("RS256", { modulusLength: 2048, extractable: true });
  return await exportPKCS8(privateKey);
}

function newMnemonic(): Promise<string> {
  return Promise.resolve(generateMnemonic(wordlist, 256) + "\n");
}

/** Reads `path`, creating it first (mode 0600, never overwriting) when it does not exist. */
async function generatedOnce(
  path: string,
  make: () => Promise<string>,
  warn: (msg: string) => void,
  what: string,
): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")) || ".", { recursive: true });
  // Written whole to a private temporary file, then linked into place: a crash leaves no empty or partial secret,
  // and the link fails if another process got there first, so two processes never use different secrets.
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  await Deno.writeTextFile(tmp, await make(), { createNew: true, mode: 0o600 });
  try {
    await Deno.link(tmp, path);
    warn(`sim mode: generated a ${what} at ${path}; set the matching *_FILE variable for anything real`);
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
  } finally {
    await Deno.remove(tmp);
  }
  return await Deno.readTextFile(path);
}
