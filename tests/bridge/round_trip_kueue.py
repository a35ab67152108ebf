#!/usr/bin/env python3
"""Round trips of generated policies through Kueue's objects (issue 17, acceptance).

    round_trip_kueue.py --gov build/bin/gov --repo . [--policies 200]

For each seed, `tools/gen-policy N --seed S --hyperpod` writes a policy of HyperPod's controls (1 to
8 teams), and Kueue's own controls are added to it, drawn from the same seed: per team
`reclaim-within-cohort`, `queueing`, `when-can-borrow`, `when-can-preempt`, `flavor-preference`,
and per policy `fair-share-preemption` (a drawn control the checker refuses in that policy, such
as one that contradicts `sharing`, is left out, and counted). Then for `--api v1beta2` and
`--api v1beta1`: `gov export kueue` must export it without error, every document must be valid
against Kueue's CRD schemas (validate_kueue.py's validators), and `gov import kueue` of the YAML, with the
policy's capacity, must give a policy that `gov diff` finds no change in. Exits 1 on any failure,
printing each with the seed that reproduces it.
"""

import argparse
import os
import random
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from round_trip_hyperpod import capacity_of, load_generator, run  # noqa: E402
from validate_kueue import Validators  # noqa: E402


TEAM_CONTROLS = [
    ("reclaim-within-cohort", ["any", "lower-priority", "never"]),
    ("queueing", ["best-effort-fifo", "strict-fifo"]),
    ("when-can-borrow", ["borrow", "try-next-flavor"]),
    ("when-can-preempt", ["preempt", "try-next-flavor"]),
    ("flavor-preference", ["borrowing-over-preemption", "preemption-over-borrowing"]),
]
STRATEGIES = ["[less-than-or-equal-to-final-share, less-than-initial-share]", "[less-than-or-equal-to-final-share]",
              "[less-than-initial-share]"]


def with_kueue_controls(text, seed, gov, scratch):
    """The policy with Kueue's controls added where the checker accepts them; (text, refused)."""
    rng = random.Random(seed * 7919 + 17)
    lines = text.split("\n")
    # Team controls go before each team block's closing brace.
    out = []
    in_team = False
    for line in lines:
        if line.startswith("team "):
            in_team = True
        if in_team and line == "}":
            chosen = {key: rng.choice(values) for key, values in TEAM_CONTROLS if rng.random() < 0.5}
            # Kueue (and gov, E0313) takes a preference only while both searches try the next flavor.
            if chosen.get("when-can-borrow") == "borrow" or chosen.get("when-can-preempt") == "preempt":
                chosen.pop("flavor-preference", None)
            out.extend(f"  {key} = {value}" for key, value in chosen.items())
            in_team = False
        out.append(line)
    candidate = "\n".join(out)
    if "idle-compute          = fair-share" in candidate and rng.random() < 0.5:
        candidate = candidate.replace("idle-compute          = fair-share",
                                      f"idle-compute          = fair-share\n  fair-share-preemption = {rng.choice(STRATEGIES)}", 1)
    probe = os.path.join(scratch, f"probe-{seed}.gov")
    with open(probe, "w") as f:
        f.write(candidate)
    if run([gov, "check", probe]).returncode != 0:
        return text, 1
    return candidate, 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gov", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--crds", required=True)
    parser.add_argument("--scratch", default=None)
    parser.add_argument("--policies", type=int, default=200)
    parser.add_argument("--first-seed", type=int, default=0)
    args = parser.parse_args()
    gov = os.path.abspath(args.gov)
    generator = load_generator(args.repo)
    validators = Validators(args.crds)
    documents = 0
    failures = []
    refused = teams = 0
    with tempfile.TemporaryDirectory(dir=args.scratch) as scratch:
        open(os.path.join(scratch, "gov.toml"), "w").close()
        with open(os.path.join(args.repo, "policies", "catalog", "aws-ml.gov")) as src, \
                open(os.path.join(scratch, "aws-ml.gov"), "w") as dst:
            dst.write(src.read())
        for seed in range(args.first_seed, args.first_seed + args.policies):
            where = f"seed {seed} (tools/gen-policy {1 + seed % 8} --seed {seed} --hyperpod, Kueue controls of seed {seed})"
            text, was_refused = with_kueue_controls(generator.generate_hyperpod(1 + seed % 8, seed, "aws-ml.gov"), seed,
                                                    gov, scratch)
            refused += was_refused
            teams += text.count("\nteam ")
            policy = os.path.join(scratch, f"gen-{seed}.gov")
            with open(policy, "w", encoding="utf-8") as f:
                f.write(text)
            for api in ("v1beta2", "v1beta1"):
                exported = run([gov, "export", "kueue", policy, "--api", api])
                if exported.returncode != 0:
                    failures.append(f"{where} --api {api}: gov export kueue failed:\n{exported.stderr}")
                    continue
                yaml_path = os.path.join(scratch, f"gen-{seed}.{api}.yaml")
                with open(yaml_path, "w") as f:
                    f.write(exported.stdout)
                for doc in yaml.safe_load_all(exported.stdout):
                    if doc is None:
                        continue
                    documents += 1
                    for problem in validators.problems(doc):
                        failures.append(f"{where} --api {api} {doc.get('kind')} {doc.get('metadata', {}).get('name')}: {problem}")
                imported = run([gov, "import", "kueue", yaml_path, "--capacity", capacity_of(text), "--catalog", "aws-ml.gov"],
                               cwd=scratch)
                if imported.returncode != 0:
                    failures.append(f"{where} --api {api}: gov import kueue failed:\n{imported.stderr}")
                    continue
                back = os.path.join(scratch, f"back-{seed}.{api}.gov")
                with open(back, "w") as f:
                    f.write(imported.stdout)
                diff = run([gov, "diff", "--files", policy, back])
                if diff.returncode != 0 or not diff.stdout.startswith("no changes between"):
                    failures.append(f"{where} --api {api}: gov diff of the policy and its round trip:\n{diff.stdout}{diff.stderr}")
    for failure in failures:
        print(f"FAIL: {failure}")
    print(f"{args.policies} generated policies ({teams} teams; {refused} kept without Kueue controls the checker "
          f"refused), 2 API versions, {documents} documents valid against Kueue's CRDs: {'ok' if not failures else f'{len(failures)} failures'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
