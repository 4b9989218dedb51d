// Parse mermaid diagrams with the book's pinned mermaid package, in node, without a browser.
//
// Usage: node mermaid_parse.mjs NODE_MODULES < [{"id": ..., "text": ...}, ...]
// Prints {"id": null | {"message": ..., "line": N | null}} on stdout: null when the diagram
// parses, else mermaid's message and the diagram line it names (1-based, front matter excluded).
//
// mermaid.parse needs no DOM, except that mermaid registers DOMPurify hooks at import: without a
// window DOMPurify is a stub without them. No-op hooks and an identity sanitize are enough to
// parse (sanitizing is for rendering, which the browser does with the real DOMPurify).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.argv[2];
const load = (path) => import(pathToFileURL(join(modules, path)).href);

const purify = (await load("dompurify/dist/purify.es.mjs")).default;
purify.addHook ??= () => {};
purify.removeHook ??= () => {};
purify.removeHooks ??= () => {};
purify.removeAllHooks ??= () => {};
purify.sanitize ??= (dirty) => dirty;
const mermaid = (await load("mermaid/dist/mermaid.core.mjs")).default;

function lineOf(error) {
  const loc = error?.hash?.loc;
  if (loc && Number.isInteger(loc.first_line)) return loc.first_line; // jison grammars
  const match = /line (\d+)/.exec(String(error?.message ?? error));
  return match ? Number(match[1]) : null; // langium grammars: "Parse error on line 2, column 7"
}

const items = JSON.parse(readFileSync(0, "utf8"));
const results = {};
for (const { id, text } of items) {
  try {
    await mermaid.parse(text);
    results[id] = null;
  } catch (error) {
    results[id] = { message: String(error?.message ?? error), line: lineOf(error) };
  }
}
process.stdout.write(JSON.stringify(results));
