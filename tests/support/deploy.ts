/** Deploy-mode configuration for tests: RUNTIME_MODE=deploy on a temporary KV file, secrets from the environment. */
import { type Config, loadConfig } from "../../config/env.ts";
import { newPrivateKeyPem } from "../../config/secrets.ts";
import { TEST_BASE_URL } from "./server.ts";

/** A fixed BIP39 test mnemonic (the standard "legal winner" vector). */
export const TEST_MNEMONIC = "legal winner thank year wave sausage worth useful legal winner thank yellow";

/** Sim mode in deploy mode with the pipeline on, its KV at `kvPath`; `env` overrides. */
export async function deployModeConfig(kvPath: string, env: Record<string, string> = {}): Promise<Config> {
  return loadConfig({
    RUNTIME_MODE: "deploy",
    KV_PATH: kvPath,
    BASE_URL: TEST_BASE_URL,
    PIPELINE: "on",
    JWT_PRIVATE_KEY: await newPrivateKeyPem(),
    MASTER_MNEMONIC: TEST_MNEMONIC,
    ...env,
  });
}
