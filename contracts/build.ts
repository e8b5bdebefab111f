// `deno task build:contracts`: regenerates contracts/UAsset.artifact.json. Commit the result; the contract test fails
// while the committed artifact differs from what the sources compile to.
import { compileUAsset, CONTRACT_NAME } from "./compile.ts";

export const ARTIFACT_URL = new URL("./UAsset.artifact.json", import.meta.url);

export function buildUAssetArtifact(): string {
  const { abi, bytecode, sourceHash } = compileUAsset();
  return JSON.stringify({ contractName: CONTRACT_NAME, abi, bytecode, sourceHash }, null, 2) + "\n";
}

if (import.meta.main) {
  const started = performance.now();
  const text = buildUAssetArtifact();
  await Deno.writeTextFile(ARTIFACT_URL, text);
  console.log(`wrote contracts/UAsset.artifact.json in ${Math.round(performance.now() - started)} ms`);
}
