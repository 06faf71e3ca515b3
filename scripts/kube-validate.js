// Checks manifest documents (a JSON array in FILE) against the Kubernetes API: the models'
// JSON schemas, then TypeScript's excess-property check against their interfaces.
//   node kube-validate.js PREFIX FILE   (PREFIX: where scripts/kube-validator.sh installed them)
// Prints one line per problem on stderr; exit 0 only when every document passes both.
"use strict";
const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");

const [prefix, file] = process.argv.slice(2);
const modules = path.join(prefix, "node_modules");
// apiVersion/kind → [module, class, interface]; a kind not listed here is an error.
const MODELS = {
  "v1/Pod": ["kubernetes-models/v1/Pod", "Pod", "IPod"],
  "networking.k8s.io/v1/NetworkPolicy": ["kubernetes-models/networking.k8s.io/v1/NetworkPolicy", "NetworkPolicy", "INetworkPolicy"],
};

const docs = JSON.parse(fs.readFileSync(file, "utf8"));
let problems = 0;
const report = (msg) => { console.error(msg); problems++; };

const models = docs.map((doc, i) => {
  const key = `${doc.apiVersion}/${doc.kind}`;
  const model = MODELS[key];
  if (!model) return report(`document ${i}: no schema for ${key}`);
  try {
    new (require(path.join(modules, model[0]))[model[1]])(doc).validate();
  } catch (e) {
    report(`document ${i} (${key}) schema: ${e.message}`);
  }
  return model;
});

// The TypeScript file sits under PREFIX so that tsc resolves the models from its node_modules.
if (!models.includes(undefined)) {
  const dir = fs.mkdtempSync(path.join(prefix, "check-"));
  const ts = path.join(dir, "manifest.ts");
  const imports = [...new Set(models.map((m) => `import type { ${m[2]} } from "${m[0]}";`))];
  const consts = docs.map((doc, i) => `export const d${i}: ${models[i][2]} = ${JSON.stringify(doc)};`);
  fs.writeFileSync(ts, [...imports, ...consts].join("\n") + "\n");
  try {
    execFileSync(path.join(modules, ".bin", "tsc"),
                 ["--noEmit", "--strict", "--skipLibCheck", "--moduleResolution", "node", "--module", "commonjs",
                  "--target", "es2020", ts], { encoding: "utf8" });
  } catch (e) {
    report(`fields: ${(e.stdout || e.message).trim()}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
if (problems === 0) console.log(`${docs.length} document(s) valid: ${docs.map((d) => d.kind).join(", ")}`);
process.exit(problems === 0 ? 0 : 1);
