/**
 * client/ is importable by Node and npm projects as it is: Node runs `.ts` files by erasing types only (no
 * parameter properties, enums or namespaces; type-only imports marked `type`) and resolves `openapi-fetch` and
 * `eventsource-parser` from node_modules. The TypeScript compiler checks the client under exactly those rules
 * (`erasableSyntaxOnly`, `verbatimModuleSyntax`, Node's module resolution, DOM and ES2023 libraries only).
 */
import assert from "node:assert/strict";
import ts from "typescript";

Deno.test("client/mod.ts type-checks as Node runs it (erasable syntax only, node module resolution)", () => {
  const entry = new URL("../client/mod.ts", import.meta.url).pathname;
  const program = ts.createProgram([entry], {
    noEmit: true,
    strict: true,
    skipLibCheck: true,
    erasableSyntaxOnly: true,
    verbatimModuleSyntax: true,
    allowImportingTsExtensions: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2023.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
    types: [],
  });
  const diagnostics = ts.getPreEmitDiagnostics(program).map((d) =>
    `${d.file?.fileName ?? ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`
  );
  assert.deepEqual(diagnostics, []);
  const files = program.getSourceFiles().map((f) => f.fileName);
  assert.ok(files.some((f) => f.includes("openapi-fetch")), "openapi-fetch resolved from node_modules");
  assert.ok(files.some((f) => f.includes("eventsource-parser")), "eventsource-parser resolved from node_modules");
});
