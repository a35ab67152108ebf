#!/usr/bin/env python3
"""Round trips of generated policies through SageMaker HyperPod's API input (issue 17, point 4).

    round_trip_hyperpod.py --gov build/bin/gov --model ../shared/data/sagemaker-task-governance-api.json --repo .

For each seed, `tools/gen-policy N --seed S --hyperpod` writes a policy using only the controls
HyperPod's API has (1 to 8 teams); `gov export hyperpod` must export it without error (no
`--allow-lossy`), every document must pass the service-model validator of validate_hyperpod.py,
and `gov import hyperpod` of the documents (with the policy's capacity, which the API does not
keep) must give a policy that `gov diff` finds no change in. A deliberately broken document must
fail the validator, so that its silence means something. Exits 1 on any failure, printing each
with the seed that reproduces it.
"""

import argparse
import copy
import importlib.machinery
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate_hyperpod import ARN, Model  # noqa: E402


def load_generator(repo):
    """tools/gen-policy as a module: one Python process instead of one per policy."""
    path = os.path.join(repo, "tools", "gen-policy")
    loader = importlib.machinery.SourceFileLoader("gen_policy", path)
    spec = importlib.util.spec_from_loader("gen_policy", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def run(command, cwd=None):
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd)


def capacity_of(policy_text):
    """`ml.g5.12xlarge=2,...` from the generated cluster's `capacity = { ml.g5.12xlarge: 2, ... }`."""
    found = re.search(r"capacity = \{ (.*) \}", policy_text)
    return ",".join(entry.replace(": ", "=") for entry in found.group(1).split(", "))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gov", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--scratch", default=None)
    parser.add_argument("--policies", type=int, default=200)
    parser.add_argument("--first-seed", type=int, default=0)
    args = parser.parse_args()
    gov = os.path.abspath(args.gov)
    model = Model(args.model)
    generator = load_generator(args.repo)
    failures = []
    documents = teams = 0
    sample = None
    with tempfile.TemporaryDirectory(dir=args.scratch) as scratch:
        open(os.path.join(scratch, "gov.toml"), "w").close()
        with open(os.path.join(args.repo, "policies", "catalog", "aws-ml.gov")) as src, \
                open(os.path.join(scratch, "aws-ml.gov"), "w") as dst:
            dst.write(src.read())
        for seed in range(args.first_seed, args.first_seed + args.policies):
            where = f"seed {seed} (tools/gen-policy {1 + seed % 8} --seed {seed} --hyperpod)"
            policy = os.path.join(scratch, f"gen-{seed}.gov")
            with open(policy, "w", encoding="utf-8") as f:
                f.write(generator.generate_hyperpod(1 + seed % 8, seed, "aws-ml.gov"))
            out_dir = os.path.join(scratch, f"out-{seed}")
            exported = run([gov, "export", "hyperpod", policy, "--cluster-arn", ARN, "--out", out_dir])
            if exported.returncode != 0 or "error" in exported.stderr:
                failures.append(f"{where}: gov export hyperpod failed:\n{exported.stderr}")
                continue
            files = []
            for name in sorted(os.listdir(out_dir)):
                if not name.endswith(".json"):
                    continue
                files.append(os.path.join(out_dir, name))
                doc = json.load(open(files[-1]))
                shape = "CreateClusterSchedulerConfigRequest" if name == "cluster-scheduler-config.json" else "CreateComputeQuotaRequest"
                documents += 1
                teams += shape == "CreateComputeQuotaRequest"
                if shape == "CreateComputeQuotaRequest" and sample is None:
                    sample = doc
                for problem in model.problems(doc, shape):
                    failures.append(f"{where} {name}: {problem}")
            imported = run([gov, "import", "hyperpod", *files, "--capacity", capacity_of(open(policy).read()),
                            "--catalog", "aws-ml.gov"], cwd=scratch)
            if imported.returncode != 0:
                failures.append(f"{where}: gov import hyperpod failed:\n{imported.stderr}")
                continue
            back = os.path.join(scratch, f"back-{seed}.gov")
            with open(back, "w") as f:
                f.write(imported.stdout)
            diff = run([gov, "diff", "--files", policy, back])
            if diff.returncode != 0 or not diff.stdout.startswith("no changes between"):
                failures.append(f"{where}: gov diff of the policy and its round trip:\n{diff.stdout}{diff.stderr}")

        # The validator can fail: a document without its team must be rejected.
        broken = copy.deepcopy(sample)
        del broken["ComputeQuotaTarget"]["TeamName"]
        if not model.problems(broken, "CreateComputeQuotaRequest"):
            failures.append("the validator accepted a compute quota without ComputeQuotaTarget.TeamName")

    for failure in failures:
        print(f"FAIL: {failure}")
    print(f"{args.policies} generated policies ({teams} teams), {documents} documents validated, "
          f"round trips: {'ok' if not failures else f'{len(failures)} failures'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
