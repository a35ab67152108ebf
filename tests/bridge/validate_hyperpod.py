#!/usr/bin/env python3
"""Validates what `gov export hyperpod` writes against SageMaker's service model.

    validate_hyperpod.py --gov build/bin/gov --model ../shared/data/sagemaker-task-governance-api.json --repo .

Exports every example policy that HyperPod can express, and generated ones (tools/gen-policy,
with `--allow-lossy`: their admission rules are dropped), and checks each document against the
input shape of its operation (CreateClusterSchedulerConfigRequest, CreateComputeQuotaRequest):
members the shape does not have, required members, enums, integer and float ranges, list
lengths, string lengths and patterns (whole-string matches, as the service applies them). The
script must name each document's command. Then feeds the validator deliberately broken
documents, which must be rejected. Exits 1 on any failure, printing each.
"""

import argparse
import copy
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ARN = "arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef123456"


def java_pattern(pattern):
    """The model's Java regular expressions in Python's dialect: Unicode classes (\\p{L}, ...)
    become their broad Python equivalents (any character that is not a control character)."""
    if "\\p{" in pattern:
        return None  # checked by printable() instead
    return re.compile(pattern)


def printable(text):
    return all(c.isprintable() or c == " " for c in text)


class Model:
    def __init__(self, path):
        with open(path) as f:
            self.shapes = json.load(f)["shapes"]

    def problems(self, value, shape_name, path="$"):
        shape = self.shapes[shape_name]
        kind = shape["type"]
        out = []
        if kind == "structure":
            if not isinstance(value, dict):
                return [f"{path}: expected an object ({shape_name})"]
            for member in shape.get("required", []):
                if member not in value:
                    out.append(f"{path}: missing required member {member} ({shape_name})")
            for key, child in value.items():
                if key not in shape["members"]:
                    out.append(f"{path}: {shape_name} has no member {key}")
                    continue
                out += self.problems(child, shape["members"][key]["shape"], f"{path}.{key}")
        elif kind == "list":
            if not isinstance(value, list):
                return [f"{path}: expected a list ({shape_name})"]
            if len(value) < shape.get("min", 0) or len(value) > shape.get("max", len(value)):
                out.append(f"{path}: {len(value)} items, {shape_name} allows {shape.get('min', 0)}..{shape.get('max')}")
            for i, child in enumerate(value):
                out += self.problems(child, shape["member"]["shape"], f"{path}[{i}]")
        elif kind == "string":
            if not isinstance(value, str):
                return [f"{path}: expected a string ({shape_name})"]
            if "enum" in shape and value not in shape["enum"]:
                out.append(f"{path}: {value!r} is not one of {shape['enum']} ({shape_name})")
            if len(value) < shape.get("min", 0) or ("max" in shape and len(value) > shape["max"]):
                out.append(f"{path}: length {len(value)} outside {shape.get('min', 0)}..{shape.get('max')} ({shape_name})")
            if "pattern" in shape:
                compiled = java_pattern(shape["pattern"])
                ok = compiled.fullmatch(value) if compiled else printable(value)
                if not ok:
                    out.append(f"{path}: {value!r} does not match {shape['pattern']} ({shape_name})")
        elif kind in ("integer", "float"):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind == "integer" and not isinstance(value, int)):
                return [f"{path}: expected an {kind} ({shape_name}), got {value!r}"]
            if ("min" in shape and value < shape["min"]) or ("max" in shape and value > shape["max"]):
                out.append(f"{path}: {value} outside {shape.get('min')}..{shape.get('max')} ({shape_name})")
        else:
            out.append(f"{path}: shape {shape_name} of type {kind} not expected in input")
        return out


def export(gov, policy, out_dir, lossy):
    command = [gov, "export", "hyperpod", policy, "--cluster-arn", ARN, "--out", out_dir] + (["--allow-lossy"] if lossy else [])
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gov", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--scratch", default=None)
    parser.add_argument("--generated", type=int, default=20)
    args = parser.parse_args()
    model = Model(args.model)
    failures = []
    documents = 0
    with tempfile.TemporaryDirectory(dir=args.scratch) as scratch:
        open(os.path.join(scratch, "gov.toml"), "w").close()
        with open(os.path.join(args.repo, "policies", "catalog", "aws-ml.gov")) as src, open(os.path.join(scratch, "aws-ml.gov"), "w") as dst:
            dst.write(src.read())
        policies = [(p, False) for p in sorted(glob.glob(os.path.join(args.repo, "policies", "examples", "*.gov")))]
        policies = [(p, p.endswith("rules.gov")) for p, _ in policies]
        for seed in range(args.generated):
            path = os.path.join(scratch, f"gen-{seed}.gov")
            subprocess.run([sys.executable, os.path.join(args.repo, "tools", "gen-policy"), str(5 + seed), "--seed", str(seed),
                            "--import", "aws-ml.gov", "-o", path], check=True)
            policies.append((path, True))
        samples = {}
        for n, (policy, lossy) in enumerate(policies):
            out_dir = os.path.join(scratch, f"out-{n}")
            try:
                export(args.gov, policy, out_dir, lossy)
            except RuntimeError as e:
                failures.append(str(e))
                continue
            script = open(os.path.join(out_dir, "create.sh")).read()
            for name in sorted(os.listdir(out_dir)):
                if not name.endswith(".json"):
                    continue
                doc = json.load(open(os.path.join(out_dir, name)))
                documents += 1
                if name == "cluster-scheduler-config.json":
                    shape, command = "CreateClusterSchedulerConfigRequest", "create-cluster-scheduler-config"
                else:
                    shape, command = "CreateComputeQuotaRequest", "create-compute-quota"
                samples.setdefault(shape, doc)
                for problem in model.problems(doc, shape):
                    failures.append(f"{policy} {name}: {problem}")
                if f"aws sagemaker {command} --cli-input-json \"file://$dir/{name}\"" not in script:
                    failures.append(f"{policy}: create.sh does not run {command} with {name}")

        # The validator can fail: broken documents must be rejected.
        quota = samples["CreateComputeQuotaRequest"]
        config = samples["CreateClusterSchedulerConfigRequest"]
        broken = {
            "an unknown member": (quota, "CreateComputeQuotaRequest", lambda d: d.__setitem__("LendingLimit", 1)),
            "a missing required member": (quota, "CreateComputeQuotaRequest", lambda d: d.pop("ComputeQuotaTarget")),
            "an unknown enum value": (quota, "CreateComputeQuotaRequest", lambda d: d["ComputeQuotaConfig"]["ResourceSharingConfig"].__setitem__("Strategy", "Share")),
            "a number out of range": (quota, "CreateComputeQuotaRequest", lambda d: d["ComputeQuotaTarget"].__setitem__("FairShareWeight", 101)),
            "a float where an integer goes": (quota, "CreateComputeQuotaRequest", lambda d: d["ComputeQuotaConfig"]["ResourceSharingConfig"].__setitem__("BorrowLimit", 0.5)),
            "a bad pattern": (quota, "CreateComputeQuotaRequest", lambda d: d.__setitem__("ClusterArn", "arn:aws:sagemaker:us-west-2:1:cluster/x")),
            "a bad team name": (quota, "CreateComputeQuotaRequest", lambda d: d["ComputeQuotaTarget"].__setitem__("TeamName", "Team_A")),
            "an unknown instance type": (quota, "CreateComputeQuotaRequest", lambda d: d["ComputeQuotaConfig"]["ComputeQuotaResources"][0].__setitem__("InstanceType", "ml.g5.9xlarge")),
            "eleven priority classes": (config, "CreateClusterSchedulerConfigRequest", lambda d: d["SchedulerConfig"].__setitem__("PriorityClasses", [{"Name": f"c{i}", "Weight": i} for i in range(11)])),
        }
        for what, (sample, shape, breaking) in broken.items():
            doc = copy.deepcopy(sample)
            breaking(doc)
            if not model.problems(doc, shape):
                failures.append(f"the validator accepted a {shape} with {what}")

    for failure in failures:
        print(f"FAIL: {failure}")
    print(f"{len(policies)} policies, {documents} documents, {len(broken)} broken documents: "
          f"{'ok' if not failures else f'{len(failures)} failures'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
