// The peer comparison of docs/performance.md: the ten workshop admission rules written for Cedar
// (@cedar-policy/cedar-wasm: Cedar's Rust evaluator compiled to WebAssembly) and for CEL
// (@bufbuild/cel: a CEL evaluator written in TypeScript), evaluated on the same tasks as gov.
//
//   node peers.mjs TASKS.json GOV_VERDICTS.json [--passes N] > peers.json
//
// TASKS.json is tools/gen-bench's workshop-tasks.json; GOV_VERDICTS.json is gov-peer-verdicts'
// output (which rules matched each task, by gov's JIT and interpreter). Every task's set of
// matched rules must be the same for all three engines: a mismatch prints the task and exits 1.
//
// What is timed, per engine, per task: for Cedar one statefulIsAuthorized call (the policy set is
// preparsed once; the call converts the request, a JavaScript object, into Cedar's Rust values
// inside WebAssembly, evaluates all 11 policies and converts the answer back into a JavaScript
// object); for CEL ten calls of planned programs (parsed and planned once; each call evaluates one
// rule over JavaScript objects, no WebAssembly). Each engine's input objects are built before the
// timing, as gov's rule inputs are. Timing: CPU time (process.cpuUsage) and wall time of each pass
// over all tasks, after one untimed pass that also checks the verdicts.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import { celEnv, isCelError, parse, plan } from "@bufbuild/cel";

const here = dirname(fileURLToPath(import.meta.url));

function usage(message) {
  process.stderr.write(`peers: ${message}\nusage: node peers.mjs TASKS.json GOV_VERDICTS.json [--passes N]\n`);
  process.exit(2);
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    usage(`cannot read ${path}: ${error.message}`);
  }
}

function packageVersion(name) {
  return JSON.parse(readFileSync(join(here, "node_modules", name, "package.json"), "utf8")).version;
}

/// Cedar policies from the .cedar file, keyed by their @id annotation (the reasons Cedar returns).
function cedarPolicies() {
  const text = readFileSync(join(here, "workshop-rules.cedar"), "utf8");
  const policies = {};
  const pattern = /@id\("([^"]+)"\)\s*((?:permit|forbid)[^;]*;)/g;
  for (const match of text.matchAll(pattern)) policies[match[1]] = match[2];
  return policies;
}

function cedarEngine(tasks, rules) {
  const policies = cedarPolicies();
  for (const rule of rules) if (!(rule in policies)) usage(`workshop-rules.cedar has no policy for rule ${rule}`);
  const parsed = cedar.preparsePolicySet("workshop", { staticPolicies: policies });
  if (parsed.type !== "success") usage(`Cedar rejects the policies: ${JSON.stringify(parsed.errors)}`);
  const bit = new Map(rules.map((rule, i) => [rule, 1 << i]));
  const calls = tasks.map((t) => ({
    principal: { type: "Task", id: t.id },
    action: { type: "Action", id: "submit" },
    resource: { type: "Cluster", id: "bench" },
    context: {
      task: {
        team: t.team, priority: t.priority, instance_type: t.instance_type, gpus: t.gpus, vcpus: t.vcpus,
        memory_mib: t.memory_mib, instances: t.instances, pods: t.pods, labels: t.labels,
      },
      team: { nominal_gpus: t.team_nominal_gpus, used_gpus: t.team_used_gpus },
      cluster: { available_gpus: t.cluster_available_gpus },
    },
    preparsedPolicySetId: "workshop",
    entities: [],
  }));
  return {
    name: "cedar",
    version: packageVersion("@cedar-policy/cedar-wasm"),
    evaluate(i) {
      const answer = cedar.statefulIsAuthorized(calls[i]);
      if (answer.type !== "success" || answer.response.diagnostics.errors.length > 0)
        throw new Error(`Cedar failed on task ${tasks[i].id}: ${JSON.stringify(answer)}`);
      if (answer.response.decision === "allow") return 0;
      let mask = 0;
      for (const id of answer.response.diagnostics.reason) mask |= bit.get(id);
      return mask;
    },
  };
}

function celEngine(tasks, rules) {
  const source = readJson(join(here, "workshop-rules.cel.json")).rules;
  const env = celEnv({});
  const programs = rules.map((rule) => {
    if (!(rule in source)) usage(`workshop-rules.cel.json has no expression for rule ${rule}`);
    return plan(env, parse(source[rule]));
  });
  const int = (n) => BigInt(n);
  const bindings = tasks.map((t) => ({
    task: {
      team: t.team, priority: t.priority, instance_type: t.instance_type, gpus: int(t.gpus), vcpus: int(t.vcpus),
      memory_mib: int(t.memory_mib), instances: int(t.instances), pods: int(t.pods), labels: t.labels,
    },
    team: { nominal_gpus: int(t.team_nominal_gpus), used_gpus: int(t.team_used_gpus) },
    cluster: { available_gpus: int(t.cluster_available_gpus) },
  }));
  return {
    name: "cel",
    version: packageVersion("@bufbuild/cel"),
    evaluate(i) {
      let mask = 0;
      for (let r = 0; r < programs.length; ++r) {
        const result = programs[r](bindings[i]);
        if (result === true) mask |= 1 << r;
        else if (result !== false) throw new Error(`CEL failed on task ${tasks[i].id}, rule ${rules[r]}: ${isCelError(result) ? result.message : result}`);
      }
      return mask;
    },
  };
}

function check(engine, tasks, expected) {
  for (let i = 0; i < tasks.length; ++i) {
    const mask = engine.evaluate(i);
    if (mask !== expected[i]) {
      process.stderr.write(`peers: ${engine.name} and gov disagree on task ${tasks[i].id}: ` +
        `${engine.name} matched rules ${mask.toString(2)}, gov ${expected[i].toString(2)} (bit i: rule i)\n`);
      return false;
    }
  }
  return true;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function time(engine, count, passes) {
  const cpu = [];
  const wall = [];
  let sink = 0;
  for (let p = 0; p < passes; ++p) {
    const cpuStart = process.cpuUsage();
    const wallStart = process.hrtime.bigint();
    for (let i = 0; i < count; ++i) sink ^= engine.evaluate(i);
    const wallNs = Number(process.hrtime.bigint() - wallStart);
    const cpuUsed = process.cpuUsage(cpuStart);
    cpu.push(((cpuUsed.user + cpuUsed.system) * 1000) / count);
    wall.push(wallNs / count);
  }
  return {
    version: engine.version,
    cpu_ns_per_decision: cpu,
    wall_ns_per_decision: wall,
    median_cpu_ns: median(cpu),
    median_wall_ns: median(wall),
    decisions_per_cpu_second: 1e9 / median(cpu),
    sink,
  };
}

function main() {
  const args = process.argv.slice(2);
  let passes = 5;
  const passesAt = args.indexOf("--passes");
  if (passesAt >= 0) {
    passes = Number(args[passesAt + 1]);
    args.splice(passesAt, 2);
    if (!Number.isInteger(passes) || passes < 1) usage("--passes needs a positive integer");
  }
  if (args.length !== 2) usage("give the tasks and gov's verdicts");
  const tasks = readJson(args[0]).tasks;
  const gov = readJson(args[1]);
  if (!Array.isArray(tasks) || gov.verdicts?.length !== tasks.length)
    usage("the tasks and gov's verdicts do not match (regenerate both)");
  const result = { node: process.version, tasks: tasks.length, rules: gov.rules, passes, engines: {} };
  for (const make of [cedarEngine, celEngine]) {
    const engine = make(tasks, gov.rules);
    if (!check(engine, tasks, gov.verdicts)) process.exit(1);
    result.engines[engine.name] = time(engine, tasks.length, passes);
    process.stderr.write(`peers: ${engine.name} ${engine.version}: same verdicts as gov on ${tasks.length} tasks; ` +
      `${result.engines[engine.name].median_cpu_ns.toFixed(0)} ns CPU per decision (median of ${passes})\n`);
  }
  result.verdicts = "identical";
  process.stdout.write(JSON.stringify(result, null, 2) + "\n");
}

main();
