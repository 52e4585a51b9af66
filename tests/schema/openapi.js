#!/usr/bin/env node
// Validate an OpenAPI document (server/openapi.json) with
// @apidevtools/swagger-parser: the OpenAPI 3.0 / Swagger 2.0 JSON schema plus
// its semantic checks ($refs resolve, path parameters declared, unique
// operationIds, ...).  swagger-parser's semantic checks cover Swagger 2.0
// only, so for OpenAPI 3 this script adds two: every `{param}` of a path is
// declared as a path parameter of each of its operations (and no undeclared
// one is), and operationIds are unique.
//
//   node tests/schema/openapi.js FILE
//
// Output: `ok openapi-valid`, or `FAIL openapi-valid: REASON`.
// Exit: 0 valid, 1 invalid (or unreadable), 2 usage / missing dependencies.
'use strict';

let SwaggerParser;
try {
  SwaggerParser = require('@apidevtools/swagger-parser');
} catch (e) {
  process.stderr.write(
    `openapi.js: npm dependencies missing (${e.message.split('\n')[0]}); run scripts/deps-npm.sh\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
if (args.length !== 1) {
  process.stderr.write('usage: node tests/schema/openapi.js FILE\n');
  process.exit(2);
}

function fail(reason) {
  process.stdout.write(`FAIL openapi-valid: ${String(reason).replace(/\s+/g, ' ').trim()}\n`);
  process.exit(1);
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

// Checks of a dereferenced OpenAPI 3 document; returns a list of problems.
function semantic(api) {
  const out = [];
  const ids = new Map();
  for (const [p, item] of Object.entries(api.paths || {})) {
    const inPath = new Set([...p.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]));
    for (const m of METHODS) {
      const op = item[m];
      if (!op) continue;
      const where = `${m.toUpperCase()} ${p}`;
      if (op.operationId !== undefined) {
        if (ids.has(op.operationId))
          out.push(`${where}: operationId ${op.operationId} also used by ${ids.get(op.operationId)}`);
        else ids.set(op.operationId, where);
      }
      const declared = new Map();
      for (const prm of [...(item.parameters || []), ...(op.parameters || [])])
        if (prm && prm.in === 'path') declared.set(prm.name, prm);
      for (const n of inPath)
        if (!declared.has(n)) out.push(`${where}: path parameter {${n}} not declared`);
        else if (declared.get(n).required !== true) out.push(`${where}: path parameter {${n}} not required`);
      for (const n of declared.keys())
        if (!inPath.has(n)) out.push(`${where}: path parameter ${n} not in the path`);
    }
  }
  return out;
}

(async () => {
  let doc;
  try {
    doc = JSON.parse(require('fs').readFileSync(args[0], 'utf8'));
  } catch (e) {
    fail(`${args[0]}: ${e.message}`);
  }
  if (!doc || typeof doc.openapi !== 'string' || !doc.openapi.startsWith('3.0.'))
    fail(`${args[0]}: not an OpenAPI 3.0 document (openapi: ${JSON.stringify(doc && doc.openapi)})`);
  let api;
  try {
    // validate() dereferences in place: give it a copy; no external $refs.
    api = await SwaggerParser.validate(structuredClone(doc), { resolve: { external: false } });
  } catch (e) {
    fail(e.message);
  }
  const problems = semantic(api);
  if (problems.length) fail(problems.join('; '));
  process.stdout.write('ok openapi-valid\n');
})();
