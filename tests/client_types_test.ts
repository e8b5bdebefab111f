/**
 * The client's generated modules cannot drift (client/README.md): regenerated from the document a started server
 * serves and from messages.ts, they must equal the committed files. And the generator and the client's libraries stay
 * out of the server's module graph: `deno info main.ts` names none of them.
 */
import assert from "node:assert/strict";
import { generateMessages, generateTypes, MESSAGES_MODULE, TYPES_MODULE } from "../cli/client_types.ts";
import { startTestServer } from "./support/server.ts";

const FIX = "run `deno task build:client` and commit the result";

Deno.test("client/openapi.generated.ts and client/messages.generated.ts are what the server serves today", async () => {
  const server = await startTestServer({ PIPELINE: "on" }); // sim mode with the pipeline: /sim is mounted too
  try {
    const document = await (await fetch(`${server.url}/openapi.json`)).json();
    assert.ok(document.paths["/orders"], "the served document");
    assert.equal(await generateTypes(document), await Deno.readTextFile(TYPES_MODULE), `types differ: ${FIX}`);
    assert.equal(await generateMessages(), await Deno.readTextFile(MESSAGES_MODULE), `messages differ: ${FIX}`);
  } finally {
    await server.close();
  }
});

Deno.test("the server's module graph holds neither the generator nor the client's libraries", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", new URL("../main.ts", import.meta.url).pathname],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  // `modules` is what main.ts reaches (`npmPackages` lists the whole lockfile's resolution, tests' packages too).
  const modules = (JSON.parse(new TextDecoder().decode(out.stdout)).modules as { specifier: string }[])
    .map((m) => m.specifier);
  assert.ok(modules.some((s) => s.endsWith("/routes/orders.ts")), "the graph was read");
  const clientDir = new URL("../client/", import.meta.url).href;
  assert.deepEqual(modules.filter((s) => s.startsWith(clientDir)), [], "main.ts reaches client/");
  // A package reads "npm:/name@..." or, installed by hand (docs/runtime.md), ".../node_modules/.deno/name@...".
  for (
    const name of ["openapi-typescript", "openapi-fetch", "eventsource-parser", "npm:/typescript@", ".deno/typescript@"]
  ) {
    assert.deepEqual(modules.filter((s) => s.includes(name)), [], `main.ts reaches ${name}`);
  }
});
