// Writes the TypeScript the check compiles (tests/bridge/typescript/run): every document of the
// export directories given, as a constant of its operation's command input type.
//   node write_check.mjs OUT.ts DIR...          each DIR one `gov export hyperpod --out`
//   node write_check.mjs --current EXPORT CURRENT
//       CURRENT receives the describe-* outputs a cluster would give after EXPORT's apply.sh ran,
//       with the cluster policy and the first team changed, so that `--current CURRENT` updates them.
import fs from "node:fs";
import path from "node:path";

const TYPES = [
  [/^cluster-scheduler-config\.json$/, "CreateClusterSchedulerConfigCommandInput"],
  [/^compute-quota-.*\.json$/, "CreateComputeQuotaCommandInput"],
  [/^update-cluster-scheduler-config\.json$/, "UpdateClusterSchedulerConfigCommandInput"],
  [/^update-compute-quota-.*\.json$/, "UpdateComputeQuotaCommandInput"],
];

function current(exportDir, currentDir) {
  fs.mkdirSync(currentDir, { recursive: true });
  const names = fs.readdirSync(exportDir).filter((n) => n.endsWith(".json")).sort();
  names.forEach((name, n) => {
    const doc = JSON.parse(fs.readFileSync(path.join(exportDir, name), "utf8"));
    const id = String(n).padStart(12, "0");
    if (name === "cluster-scheduler-config.json") {
      Object.assign(doc, { ClusterSchedulerConfigId: id, ClusterSchedulerConfigVersion: 3 });
      doc.SchedulerConfig.IdleResourceSharing = doc.SchedulerConfig.IdleResourceSharing === "Enabled" ? "Disabled" : "Enabled";
    } else {
      Object.assign(doc, { ComputeQuotaId: id, ComputeQuotaVersion: 2 });
      if (n === 1) doc.ComputeQuotaTarget.FairShareWeight = (doc.ComputeQuotaTarget.FairShareWeight + 1) % 101;
    }
    fs.writeFileSync(path.join(currentDir, name), JSON.stringify(doc));
  });
}

function check(out, dirs) {
  const used = new Set();
  const lines = [];
  let n = 0;
  for (const dir of dirs) {
    for (const name of fs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
      const found = TYPES.find(([pattern]) => pattern.test(name));
      if (!found) throw new Error(`${dir}/${name}: no command input type for it`);
      used.add(found[1]);
      const text = fs.readFileSync(path.join(dir, name), "utf8");
      lines.push(`// ${path.join(dir, name)}`, `export const d${n++}: ${found[1]} = ${text.trim()};`);
    }
  }
  const header = `import type { ${[...used].sort().join(", ")} } from "@aws-sdk/client-sagemaker";`;
  fs.writeFileSync(out, [header, ...lines, ""].join("\n"));
  console.log(`${n} documents as ${[...used].sort().join(", ")}`);
}

const args = process.argv.slice(2);
if (args[0] === "--current") current(args[1], args[2]);
else check(args[0], args.slice(1));
