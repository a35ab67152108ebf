#!/usr/bin/env python3
"""Validates what `gov export kueue` writes against Kueue's own CRD schemas.

    validate_kueue.py --gov build/bin/gov --crds ../shared/data/kueue-crds --repo .

Exports every example policy, the policies of tests/bridge/policies/ and generated ones
(tools/gen-policy) with `--api v1beta2` and `--api v1beta1`, each with `--naming hyperpod` and
`plain`, and checks every document:
  - against the `openAPIV3Schema` of its kind and served version (python3-jsonschema), made
    strict: a field the schema does not declare is an error (the API server would prune it
    silently, so the object would not say what gov meant);
  - the `x-kubernetes-list-type: map` keys are unique (flavors, resources);
  - the CRDs' CEL rules (`x-kubernetes-validations`), which no JSON Schema validator runs, by the
    Python rendering of each below. Every CEL rule of the emitted kinds must be known here, with
    the way gov keeps a policy from breaking it: a checker diagnostic (checked by feeding `gov
    check` a policy that breaks it) or the exporter's structure.
Then feeds the validators deliberately broken documents, which must be rejected. Exits 1 on
any failure, printing each.
"""

import argparse
import copy
import glob
import os
import re
import subprocess
import sys
import tempfile

import jsonschema
import yaml

EMITTED_KINDS = ["ClusterQueue", "Cohort", "LocalQueue", "ResourceFlavor", "WorkloadPriorityClass"]
CRD_FILES = {
    "ClusterQueue": "kueue.x-k8s.io_clusterqueues.yaml",
    "Cohort": "kueue.x-k8s.io_cohorts.yaml",
    "LocalQueue": "kueue.x-k8s.io_localqueues.yaml",
    "ResourceFlavor": "kueue.x-k8s.io_resourceflavors.yaml",
    "WorkloadPriorityClass": "kueue.x-k8s.io_workloadpriorityclasses.yaml",
}
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def has(obj, key):
    return isinstance(obj, dict) and key in obj


# Each CEL rule of the emitted kinds: its text, a Python rendering of it over `self` (the object
# the rule sits on; `old` rules compare with the stored object and hold for a create), and how
# gov keeps policies from breaking it: ("checker", CODE, a policy body that breaks it) or
# ("structure", why the exporter never writes such an object).
CEL_RULES = {
    "!has(self.preference) || (self.whenCanBorrow == 'TryNextFlavor' && self.whenCanPreempt == 'TryNextFlavor')": (
        lambda s: not has(s, "preference") or (s.get("whenCanBorrow") == "TryNextFlavor" and s.get("whenCanPreempt") == "TryNextFlavor"),
        ("checker", "E0313", "when-can-borrow = borrow\n  flavor-preference = preemption-over-borrowing"),
    ),
    "!(self.reclaimWithinCohort == 'Never' && has(self.borrowWithinCohort) &&  self.borrowWithinCohort.policy != 'Never')": (
        lambda s: not (s.get("reclaimWithinCohort") == "Never" and has(s, "borrowWithinCohort") and s["borrowWithinCohort"].get("policy", "Never") != "Never"),
        ("checker", "E0311", "reclaim-within-cohort = never\n  borrow-within-cohort = lower-priority"),
    ),
    "self.flavors.all(x, size(x.resources) == size(self.coveredResources))": (
        lambda s: all(len(f.get("resources", [])) == len(s.get("coveredResources", [])) for f in s.get("flavors", [])),
        ("structure", "every flavor lists the five covered resources, zeros included"),
    ),
    "!has(self.cohort) && has(self.resourceGroups) ? self.resourceGroups.all(rg, rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit)))) : true": (
        lambda s: has(s, "cohort") or not has(s, "resourceGroups") or all(not has(r, "borrowingLimit") for rg in s["resourceGroups"] for f in rg["flavors"] for r in f["resources"]),
        ("structure", "every ClusterQueue is in the cohort"),
    ),
    "!has(self.cohortName) && has(self.resourceGroups) ? self.resourceGroups.all(rg, rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit)))) : true": (
        lambda s: has(s, "cohortName") or not has(s, "resourceGroups") or all(not has(r, "borrowingLimit") for rg in s["resourceGroups"] for f in rg["flavors"] for r in f["resources"]),
        ("structure", "every ClusterQueue is in the cohort"),
    ),
    "self == oldSelf": (lambda s: True, ("structure", "an update rule (LocalQueue.spec.clusterQueue is immutable); names never change")),
    "!has(self.topologyName) || self.nodeLabels.size() >= 1": (
        lambda s: not has(s, "topologyName") or len(s.get("nodeLabels", {})) >= 1,
        ("structure", "no topology is written"),
    ),
    "!has(oldSelf.topologyName) || (has(self.topologyName) && self.topologyName == oldSelf.topologyName)": (
        lambda s: True, ("structure", "an update rule; no topology is written"),
    ),
    "self.all(x, x.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])": (lambda s: all(x.get("effect") in ("NoSchedule", "PreferNoSchedule", "NoExecute") for x in s), ("structure", "no taints are written")),
    "self.all(x, !has(x.key) ? x.operator == 'Exists' : true)": (lambda s: True, ("structure", "no tolerations are written")),
    "self.all(x, has(x.tolerationSeconds) ? x.effect == 'NoExecute' : true)": (lambda s: True, ("structure", "no tolerations are written")),
    "self.all(x, !has(x.operator) || x.operator in ['Equal', 'Exists'])": (lambda s: True, ("structure", "no tolerations are written")),
    "self.all(x, has(x.operator) && x.operator == 'Exists' ? !has(x.value) : true)": (lambda s: True, ("structure", "no tolerations are written")),
    "self.all(x, !has(x.effect) || x.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])": (lambda s: True, ("structure", "no tolerations are written")),
}


def normalise_rule(rule):
    """The rule with runs of white space as one space (the CRDs' YAML folds long rules)."""
    return " ".join(rule.split())


CEL_RULES = {normalise_rule(rule): how for rule, how in CEL_RULES.items()}


class Validators:
    def __init__(self, crds):
        self.schemas = {}  # (kind, version) -> strict schema
        self.rules = []  # rule texts found
        for kind, name in CRD_FILES.items():
            with open(os.path.join(crds, name)) as f:
                crd = yaml.safe_load(f)
            for version in crd["spec"]["versions"]:
                if not version.get("served"):
                    continue
                schema = version["schema"]["openAPIV3Schema"]
                self.collect_rules(schema)
                self.schemas[(kind, version["name"])] = strict(copy.deepcopy(schema))

    def collect_rules(self, node):
        if isinstance(node, dict):
            for rule in node.get("x-kubernetes-validations", []):
                self.rules.append(rule["rule"])
            for child in node.values():
                self.collect_rules(child)
        elif isinstance(node, list):
            for child in node:
                self.collect_rules(child)

    def problems(self, doc):
        """What is wrong with one document: a list of messages (empty when valid)."""
        kind = doc.get("kind")
        api = doc.get("apiVersion", "")
        if kind == "Namespace":
            name = doc.get("metadata", {}).get("name", "")
            return [] if api == "v1" and DNS_LABEL.match(name) and len(name) <= 63 else [f"bad Namespace {name!r}"]
        if kind not in CRD_FILES or not api.startswith("kueue.x-k8s.io/"):
            return [f"unexpected kind {kind!r} of {api!r}"]
        version = api.split("/", 1)[1]
        schema = self.schemas.get((kind, version))
        if schema is None:
            return [f"{kind} {version} is not served"]
        out = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in jsonschema.Draft7Validator(schema).iter_errors(doc)]
        out += list_map_problems(schema, doc, kind)
        out += cel_problems(schema, doc, kind)
        name = doc.get("metadata", {}).get("name", "")
        if not re.match(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$", name) or len(name) > 253:
            out.append(f"metadata.name {name!r} is not a DNS subdomain")
        return out


def strict(schema):
    """The schema with `additionalProperties: false` wherever it lists properties and allows no
    others (Kubernetes prunes unknown fields; a strict apply rejects them)."""
    if isinstance(schema, dict):
        if "properties" in schema and "additionalProperties" not in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
            schema["additionalProperties"] = False
        for key, child in list(schema.items()):
            if key == "properties":
                for sub in child.values():
                    strict(sub)
            elif isinstance(child, (dict, list)):
                strict(child)
    elif isinstance(schema, list):
        for child in schema:
            strict(child)
    return schema


def walk(schema, value, path, visit):
    visit(schema, value, path)
    if isinstance(value, dict) and "properties" in schema:
        for key, child in value.items():
            if key in schema["properties"]:
                walk(schema["properties"][key], child, f"{path}.{key}", visit)
    elif isinstance(value, list) and "items" in schema:
        for i, child in enumerate(value):
            walk(schema["items"], child, f"{path}[{i}]", visit)


def list_map_problems(schema, doc, kind):
    out = []

    def visit(node, value, path):
        if node.get("x-kubernetes-list-type") == "map" and isinstance(value, list):
            keys = [tuple(item.get(k) for k in node.get("x-kubernetes-list-map-keys", [])) for item in value]
            if len(keys) != len(set(keys)):
                out.append(f"{kind} {path}: duplicate list-map keys {keys}")

    walk(schema, doc, "", visit)
    return out


def cel_problems(schema, doc, kind):
    out = []

    def visit(node, value, path):
        for rule in node.get("x-kubernetes-validations", []):
            known = CEL_RULES.get(normalise_rule(rule["rule"]))
            if known is None:
                out.append(f"{kind} {path}: CEL rule gov does not know: {rule['rule']}")
            elif not known[0](value):
                out.append(f"{kind} {path}: {rule.get('message', rule['rule'])}")

    walk(schema, doc, "", visit)
    return out


def export(gov, policy, api, naming, lossy):
    command = [gov, "export", "kueue", policy, "--api", api, "--naming", naming] + (["--allow-lossy"] if lossy else [])
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"gov export kueue {policy} --api {api} --naming {naming} failed:\n{result.stderr}")
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc is not None]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gov", required=True)
    parser.add_argument("--crds", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--scratch", default=None, help="where temporary policies go (default: the system's)")
    parser.add_argument("--generated", type=int, default=20, help="generated policies (tools/gen-policy seeds)")
    args = parser.parse_args()
    validators = Validators(args.crds)
    failures = []

    # Every CEL rule of the emitted kinds is known, and each enforced by the checker is.
    normalised = {normalise_rule(r) for r in validators.rules}
    for rule in sorted(normalised):
        if rule not in CEL_RULES:
            failures.append(f"CEL rule gov does not know (add it to CEL_RULES with how gov keeps it): {rule}")
    with tempfile.TemporaryDirectory(dir=args.scratch) as scratch:
        # A policy root of its own (gov.toml) holding a copy of the shipped catalog.
        open(os.path.join(scratch, "gov.toml"), "w").close()
        with open(os.path.join(args.repo, "policies", "catalog", "aws-ml.gov")) as src:
            catalog = src.read()
        with open(os.path.join(scratch, "aws-ml.gov"), "w") as dst:
            dst.write(catalog)
        for rule, (_, how) in CEL_RULES.items():
            if how[0] != "checker":
                continue
            path = os.path.join(scratch, f"{how[1]}.gov")
            with open(path, "w") as f:
                f.write('import "aws-ml.gov"\n'
                        "cluster c {\n  catalog = aws-ml\n  capacity = { ml.g5.8xlarge: 2, ml.g5.12xlarge: 1 }\n}\n"
                        "policy {\n  idle-compute = fcfs\n}\n"
                        "team a {\n  quota ml.g5.8xlarge { instances = 1 }\n  quota ml.g5.12xlarge { instances = 1 }\n"
                        f"  {how[2]}\n}}\n")
            checked = subprocess.run([args.gov, "check", path], capture_output=True, text=True)
            if checked.returncode != 1 or f"[{how[1]}]" not in checked.stderr:
                failures.append(f"CEL rule `{rule}`: `gov check` should report {how[1]}, said ({checked.returncode}):\n{checked.stderr}")

        policies = sorted(glob.glob(os.path.join(args.repo, "policies", "examples", "*.gov")))
        policies += sorted(glob.glob(os.path.join(args.repo, "tests", "bridge", "policies", "*.gov")))
        for seed in range(args.generated):
            path = os.path.join(scratch, f"gen-{seed}.gov")
            subprocess.run([sys.executable, os.path.join(args.repo, "tools", "gen-policy"), str(5 + seed), "--seed", str(seed), "--import", "aws-ml.gov", "-o", path], check=True)
            policies.append(path)

        documents = 0
        for policy in policies:
            for api in ("v1beta2", "v1beta1"):
                for naming in ("hyperpod", "plain"):
                    try:
                        # Generated policies and rules.gov have admission rules, which Kueue cannot express.
                        docs = export(args.gov, policy, api, naming, lossy=os.path.basename(policy).startswith("gen-") or policy.endswith("rules.gov"))
                    except RuntimeError as e:
                        failures.append(str(e))
                        continue
                    kinds = {d.get("kind") for d in docs}
                    for kind in ("Namespace", "ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue"):
                        if kind not in kinds:
                            failures.append(f"{policy} ({api}, {naming}): no {kind}")
                    for doc in docs:
                        documents += 1
                        for problem in validators.problems(doc):
                            failures.append(f"{policy} ({api}, {naming}) {doc.get('kind')} {doc.get('metadata', {}).get('name')}: {problem}")

        # The validators can fail: broken documents must be rejected.
        golden = os.path.join(args.repo, "tests", "bridge", "golden", "hyperpod-ns-onlygputeam-clusterqueue.v1beta2.yaml")
        queue = yaml.safe_load(open(golden))
        if validators.problems(queue):
            failures.append(f"the golden ClusterQueue does not validate: {validators.problems(queue)}")
        broken = {
            "an unknown enum value": lambda q: q["spec"].__setitem__("queueingStrategy", "Sometimes"),
            "a missing required field": lambda q: q["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0].pop("nominalQuota"),
            "a bad quantity": lambda q: q["spec"]["resourceGroups"][0]["flavors"][0]["resources"][3].__setitem__("nominalQuota", "1.5 GiB"),
            "an unknown field": lambda q: q["spec"].__setitem__("cohort", "shared-pool"),
            "a duplicate flavor": lambda q: q["spec"]["resourceGroups"][0]["flavors"].append(copy.deepcopy(q["spec"]["resourceGroups"][0]["flavors"][0])),
            "a CEL rule (preference while borrowing stops the search)": lambda q: q["spec"]["flavorFungibility"].update({"whenCanBorrow": "MayStopSearch", "preference": "PreemptionOverBorrowing"}),
            "a CEL rule (borrowing preemption without reclaim)": lambda q: q["spec"]["preemption"].__setitem__("reclaimWithinCohort", "Never"),
            "a CEL rule (flavor without every covered resource)": lambda q: q["spec"]["resourceGroups"][0]["flavors"][0]["resources"].pop(),
            "a bad flavor name": lambda q: q["spec"]["resourceGroups"][0]["flavors"][0].__setitem__("name", "ML.G6"),
        }
        for what, breaking in broken.items():
            doc = copy.deepcopy(queue)
            breaking(doc)
            if not validators.problems(doc):
                failures.append(f"the validator accepted a ClusterQueue with {what}")

    for failure in failures:
        print(f"FAIL: {failure}")
    print(f"{len(policies)} policies, {documents} documents, {len(CEL_RULES)} CEL rules known, {len(broken)} broken documents: "
          f"{'ok' if not failures else f'{len(failures)} failures'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
