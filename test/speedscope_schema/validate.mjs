// Validates speedscope files against the schema published with speedscope itself
// (node_modules/speedscope/dist/release/file-format-schema.json, the same file as
// https://www.speedscope.app/file-format-schema.json). Usage: node validate.mjs FILE...
// Exit 0: every file is valid; 1: a file is not (the errors are printed); 2: bad usage.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const Ajv = require("ajv");
const schema = JSON.parse(
  readFileSync(require.resolve("speedscope/dist/release/file-format-schema.json"), "utf8"));

if (process.argv.length < 3) {
  console.error("usage: node validate.mjs FILE...");
  process.exit(2);
}
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
let failed = false;
for (const file of process.argv.slice(2)) {
  const data = JSON.parse(readFileSync(file, "utf8"));
  if (validate(data)) {
    console.log(`${file}: valid`);
  } else {
    failed = true;
    console.log(`${file}: INVALID`);
    for (const e of validate.errors.slice(0, 20)) console.log(`  ${e.instancePath} ${e.message}`);
  }
}
process.exit(failed ? 1 : 0);
