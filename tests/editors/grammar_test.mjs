// Tokenizes .gov files with the TextMate grammar through vscode-textmate and vscode-oniguruma,
// as VS Code does, and fails when a non-blank character gets no scope beyond `source.gov` or any
// token gets an `invalid` scope. Usage: node grammar_test.mjs GRAMMAR FILE...
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const oniguruma = require("vscode-oniguruma");
const textmate = require("vscode-textmate");

const [grammarPath, ...files] = process.argv.slice(2);
const wasm = fs.readFileSync(path.join(path.dirname(require.resolve("vscode-oniguruma")), "onig.wasm"));
await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
const registry = new textmate.Registry({
  onigLib: Promise.resolve({
    createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
    createOnigString: (s) => new oniguruma.OnigString(s),
  }),
  loadGrammar: async () => textmate.parseRawGrammar(fs.readFileSync(grammarPath, "utf8"), grammarPath),
});
const grammar = await registry.loadGrammar("source.gov");

let failures = 0;
let tokens = 0;
const seen = new Set();
for (const file of files) {
  let state = textmate.INITIAL;
  const lines = fs.readFileSync(file, "utf8").split("\n");
  lines.forEach((line, i) => {
    const result = grammar.tokenizeLine(line, state);
    state = result.ruleStack;
    for (const token of result.tokens) {
      const text = line.slice(token.startIndex, token.endIndex);
      tokens += 1;
      for (const scope of token.scopes) seen.add(scope);
      const where = `${file}:${i + 1}:${token.startIndex + 1}`;
      if (token.scopes.some((s) => s.startsWith("invalid"))) {
        console.error(`${where}: \`${text}\` has an invalid scope: ${token.scopes.join(" ")}`);
        failures += 1;
      } else if (text.trim() !== "" && token.scopes.length < 2) {
        console.error(`${where}: \`${text}\` has no scope`);
        failures += 1;
      }
    }
  });
}
console.log(`${files.length} files, ${tokens} tokens, ${seen.size} distinct scopes, ${failures} failures`);
process.exit(failures === 0 && files.length > 0 ? 0 : 1);
