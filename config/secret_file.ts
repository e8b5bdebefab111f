// Reading one secret file, on its own so that config/evm.ts (a signing key file) and config/secrets.ts (the JWT key
// and the mnemonic) share it without importing each other through config/env.ts.
/**
 * Reads a key or mnemonic file named by `variable`, refusing one that group or others may read or write: a secret
 * that other accounts on the host can read is already leaked. The mode is taken from the opened file, so the file
 * checked is the file read.
 */
export async function readSecretFile(path: string, variable: string): Promise<string> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path);
  } catch (err) {
    const reason = err instanceof Deno.errors.NotFound ? "does not exist" : "cannot be read";
    throw new Error(`${variable} names ${path}, which ${reason}`);
  }
  try {
    const { mode, isFile } = await file.stat();
    if (!isFile) throw new Error(`${variable} names ${path}, which is not a file`);
    // `mode` is null where the OS has no Unix permissions (Windows): nothing to check there.
    if (mode !== null && (mode & 0o077) !== 0) {
      const octal = (mode & 0o777).toString(8).padStart(4, "0");
      throw new Error(
        `${variable} names ${path}, whose mode ${octal} lets group or others access it; ` +
          `refusing to use it: run chmod 600 ${path}`,
      );
    }
    return await new Response(file.readable).text();
  } finally {
    try {
      file.close();
    } catch { /* closed by reading it to the end */ }
  }
}
