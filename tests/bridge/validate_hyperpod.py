#!/usr/bin/env python3
"""Validates what `gov export hyperpod` writes against SageMaker's service model.

    validate_hyperpod.py --gov build/bin/gov --model ../shared/data/sagemaker-task-governance-api.json --repo .

Exports every example policy that HyperPod can express, and generated ones (tools/gen-policy,
with `--allow-lossy`: their admission rules are dropped), and checks each document against the
input shape of its operation (CreateClusterSchedulerConfigRequest, CreateComputeQuotaRequest):
members the shape does not have, required members, enums, integer and float ranges, list
lengths, string lengths and patterns (whole-string matches, as the service applies them). The
script must name each document's command. Each policy is also exported with `--format
cloudformation`: the template's sections, logical ids, parameter, `Ref`s and `DependsOn` are
checked, each resource's properties against its create request's shape (CloudFormation's
properties mirror the API's members: checked too), and they must equal the cli-json documents.
Against `--current` describe outputs made from its own documents, each policy must give no
change; with the cluster policy and one team changed, one team missing and one extra, exactly
the two updates (TargetVersion the described version), the create and the delete, in that order
in apply.sh, each document valid for its operation's input shape.
Then feeds the validator deliberately broken documents and templates, which must be rejected.
Exits 1 on any failure, printing each. (cfn-lint is not a Debian package, so it is not used.)
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


def export(gov, policy, out_dir, lossy, extra=()):
    command = [gov, "export", "hyperpod", policy, "--cluster-arn", ARN, "--out", out_dir] + (["--allow-lossy"] if lossy else []) + list(extra)
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr}")


# The properties of the two resource types (CloudFormation Template Reference,
# AWS::SageMaker::ClusterSchedulerConfig and AWS::SageMaker::ComputeQuota): the members of the create
# requests, which main() checks against the model, so a property is validated as its member.
CFN_RESOURCES = {
    "AWS::SageMaker::ClusterSchedulerConfig": ("CreateClusterSchedulerConfigRequest",
                                               {"ClusterArn", "Description", "Name", "SchedulerConfig", "Tags"}),
    "AWS::SageMaker::ComputeQuota": ("CreateComputeQuotaRequest",
                                     {"ActivationState", "ClusterArn", "ComputeQuotaConfig", "ComputeQuotaTarget",
                                      "Description", "Name", "Tags"}),
}
CFN_TOP = {"AWSTemplateFormatVersion", "Description", "Metadata", "Parameters", "Resources"}
LOGICAL_ID = re.compile(r"[A-Za-z0-9]{1,255}")


def resolve_refs(value, parameters, problems, path):
    """`{"Ref": P}` replaced by parameter P's Default (or a placeholder of its pattern); a Ref to
    no parameter or another intrinsic function is a problem."""
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)).startswith(("Ref", "Fn::")):
            name, target = next(iter(value.items()))
            if name != "Ref" or target not in parameters:
                problems.append(f"{path}: {name} {target!r} is not a parameter of the template")
                return None
            return parameters[target].get("Default", ARN)
        return {k: resolve_refs(v, parameters, problems, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_refs(v, parameters, problems, f"{path}[{i}]") for i, v in enumerate(value)]
    return value


def template_problems(model, template):
    """What is wrong with a CloudFormation template gov wrote, checked against the service model."""
    out = []
    if not isinstance(template, dict):
        return ["the template is not an object"]
    for key in template:
        if key not in CFN_TOP:
            out.append(f"$: a template has no section {key}")
    if template.get("AWSTemplateFormatVersion") != "2010-09-09":
        out.append("$.AWSTemplateFormatVersion: not 2010-09-09")
    if len(template.get("Description", "").encode()) > 1024:
        out.append("$.Description: longer than 1024 bytes")
    parameters = template.get("Parameters", {})
    for name, parameter in parameters.items():
        if not LOGICAL_ID.fullmatch(name) or parameter.get("Type") != "String":
            out.append(f"$.Parameters.{name}: not a String parameter with a logical id")
        if name == "ClusterArn" and parameter.get("AllowedPattern") != model.shapes["ClusterArn"]["pattern"]:
            out.append(f"$.Parameters.ClusterArn: AllowedPattern is not the model's ClusterArn pattern")
        if "Default" in parameter and "AllowedPattern" in parameter and not re.fullmatch(parameter["AllowedPattern"], parameter["Default"]):
            out.append(f"$.Parameters.{name}: Default does not match AllowedPattern")
    resources = template.get("Resources")
    if not isinstance(resources, dict) or not resources:
        return out + ["$.Resources: missing or empty"]
    for name, resource in resources.items():
        path = f"$.Resources.{name}"
        if not LOGICAL_ID.fullmatch(name):
            out.append(f"{path}: not a logical id (letters and digits)")
        for key in resource:
            if key not in ("Type", "Properties", "DependsOn"):
                out.append(f"{path}: a resource has no attribute {key}")
        if resource.get("Type") not in CFN_RESOURCES:
            out.append(f"{path}: type {resource.get('Type')!r} is not one gov writes")
            continue
        shape, properties = CFN_RESOURCES[resource["Type"]]
        for key in resource.get("Properties", {}):
            if key not in properties:
                out.append(f"{path}.Properties: {resource['Type']} has no property {key}")
        depends = resource.get("DependsOn", [])
        for target in [depends] if isinstance(depends, str) else depends:
            if target not in resources or target == name:
                out.append(f"{path}.DependsOn: {target!r} is not another resource")
        resolved = resolve_refs(resource.get("Properties", {}), parameters, out, f"{path}.Properties")
        out += model.problems(resolved, shape, f"{path}.Properties")
    return out


def describes(out_dir):
    """The describe-* outputs a cluster would give after apply.sh ran the create documents of
    `out_dir`: ids, versions and status added, ClusterArn kept."""
    out = {}
    for n, name in enumerate(sorted(os.listdir(out_dir))):
        if not name.endswith(".json"):
            continue
        doc = json.load(open(os.path.join(out_dir, name)))
        ident = f"{n:012d}"
        if name == "cluster-scheduler-config.json":
            doc.update({"ClusterSchedulerConfigId": ident, "ClusterSchedulerConfigVersion": 3, "Status": "Created"})
        else:
            doc.update({"ComputeQuotaId": ident, "ComputeQuotaVersion": 2, "Status": "Created"})
        out[name] = doc
    return out


DEFAULTS = {"PreemptTeamTasks": "LowerPriority", "ActivationState": "Enabled", "FairShareWeight": 0,
            "FairShare": "Enabled", "IdleResourceSharing": "Disabled", "BorrowLimit": 50, "Strategy": "LendAndBorrow"}


def restated(value):
    """The same policy as the service may print it: defaults left out, whole amounts as floats
    (`48.0`), lists and members in reverse order."""
    if isinstance(value, dict):
        return {k: restated(v) for k, v in reversed(list(value.items())) if DEFAULTS.get(k, object()) != v}
    if isinstance(value, list):
        return [restated(v) for v in reversed(value)]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def check_current(gov, policy, lossy, out_dir, scratch, n, model, failures):
    """`--current` against the policy's own objects gives nothing; against changed ones, exactly
    the updates, the create and the delete, each document valid for its operation."""
    current = describes(out_dir)
    same_dir = os.path.join(scratch, f"current-same-{n}")
    os.makedirs(same_dir)
    for name, doc in current.items():
        json.dump(restated(doc), open(os.path.join(same_dir, name), "w"))
    command = [gov, "export", "hyperpod", policy, "--current", same_dir] + (["--allow-lossy"] if lossy else [])
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0 or not result.stdout.startswith("no changes"):
        failures.append(f"{policy}: --current of its own objects gives changes:\n{result.stdout[:400]}{result.stderr[:400]}")
    quotas = sorted(name for name in current if name.startswith("compute-quota-"))
    if len(quotas) < 2:
        return 0
    changed_dir = os.path.join(scratch, f"current-changed-{n}")
    os.makedirs(changed_dir)
    config = current["cluster-scheduler-config.json"]
    sched = config["SchedulerConfig"]
    sched["FairShare"] = "Disabled" if sched.get("FairShare", "Enabled") == "Enabled" else "Enabled"
    target = current[quotas[0]]["ComputeQuotaTarget"]
    target["FairShareWeight"] = (target.get("FairShareWeight", 0) + 1) % 101
    created = quotas[-1]
    del current[created]
    current["removed.json"] = {"ComputeQuotaId": "removed00000", "ComputeQuotaVersion": 7, "Name": "removed",
                               "ComputeQuotaTarget": {"TeamName": "zz-removed"}, "ComputeQuotaConfig": {}}
    for name, doc in current.items():
        json.dump(doc, open(os.path.join(changed_dir, name), "w"))
    update_dir = os.path.join(scratch, f"update-{n}")
    export(gov, policy, update_dir, lossy, ["--current", changed_dir])
    expected = {"apply.sh", "update-cluster-scheduler-config.json", "update-" + quotas[0], created}
    if set(os.listdir(update_dir)) != expected:
        failures.append(f"{policy}: --current wrote {sorted(os.listdir(update_dir))}, expected {sorted(expected)}")
        return 0
    shapes = {"update-cluster-scheduler-config.json": "UpdateClusterSchedulerConfigRequest",
              "update-" + quotas[0]: "UpdateComputeQuotaRequest", created: "CreateComputeQuotaRequest"}
    for name, shape in shapes.items():
        doc = json.load(open(os.path.join(update_dir, name)))
        for problem in model.problems(doc, shape):
            failures.append(f"{policy} {name}: {problem}")
    update = json.load(open(os.path.join(update_dir, "update-" + quotas[0])))
    if update.get("TargetVersion") != 2 or update.get("ComputeQuotaId") != current[quotas[0]]["ComputeQuotaId"]:
        failures.append(f"{policy}: the update of {quotas[0]} does not target the described id and version")
    lines = [l for l in open(os.path.join(update_dir, "apply.sh")).read().splitlines() if l.startswith("aws ")]
    order = ["update-cluster-scheduler-config", "delete-compute-quota --compute-quota-id removed00000",
             "update-compute-quota", "create-compute-quota"]
    if len(lines) != len(order) or any(not line.startswith("aws sagemaker " + step) for line, step in zip(lines, order)):
        failures.append(f"{policy}: apply.sh runs {lines}, expected {order}")
    return len(shapes)


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
        # CloudFormation's properties are the create requests' members.
        for kind, (shape, properties) in CFN_RESOURCES.items():
            if set(model.shapes[shape]["members"]) != properties:
                failures.append(f"{kind}'s properties {sorted(properties)} are not the members of {shape}")
        samples = {}
        updates = 0
        templates = 0
        template_sample = None
        for n, (policy, lossy) in enumerate(policies):
            out_dir = os.path.join(scratch, f"out-{n}")
            try:
                export(args.gov, policy, out_dir, lossy)
            except RuntimeError as e:
                failures.append(str(e))
                continue
            script = open(os.path.join(out_dir, "apply.sh")).read()
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
                    failures.append(f"{policy}: apply.sh does not run {command} with {name}")
            updates += check_current(args.gov, policy, lossy, out_dir, scratch, n, model, failures)
            # The same policy as one CloudFormation template: valid, and the same requests.
            cfn_dir = os.path.join(scratch, f"cfn-{n}")
            try:
                export(args.gov, policy, cfn_dir, lossy, ["--format", "cloudformation"])
            except RuntimeError as e:
                failures.append(str(e))
                continue
            template = json.load(open(os.path.join(cfn_dir, "cloudformation.json")))
            templates += 1
            template_sample = template_sample or template
            for problem in template_problems(model, template):
                failures.append(f"{policy} cloudformation.json: {problem}")
            cli = {}
            for name in os.listdir(out_dir):
                if name.endswith(".json"):
                    cli[name] = json.load(open(os.path.join(out_dir, name)))
            for resource in template["Resources"].values():
                properties = resolve_refs(resource["Properties"], template["Parameters"], [], "")
                name = "cluster-scheduler-config.json" if resource["Type"].endswith("ClusterSchedulerConfig") else \
                    f"compute-quota-{properties['ComputeQuotaTarget']['TeamName']}.json"
                if cli.pop(name, None) != properties:
                    failures.append(f"{policy}: the template's {resource['Type']} differs from {name}")
            if cli:
                failures.append(f"{policy}: the template has no resource for {sorted(cli)}")

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
        first_quota = lambda t: next(r for r in t["Resources"].values() if r["Type"] == "AWS::SageMaker::ComputeQuota")
        broken_templates = {
            "an unknown section": lambda t: t.__setitem__("Outputs", {}),
            "an unknown resource type": lambda t: first_quota(t).__setitem__("Type", "AWS::SageMaker::Quota"),
            "an unknown property": lambda t: first_quota(t)["Properties"].__setitem__("LendingLimit", 1),
            "a Ref to no parameter": lambda t: first_quota(t)["Properties"].__setitem__("ClusterArn", {"Ref": "Cluster"}),
            "a bad member inside a property": lambda t: first_quota(t)["Properties"]["ComputeQuotaTarget"].__setitem__("FairShareWeight", 101),
            "a missing required property": lambda t: first_quota(t)["Properties"].pop("ComputeQuotaConfig"),
            "a DependsOn to no resource": lambda t: first_quota(t).__setitem__("DependsOn", "Scheduler"),
            "a bad logical id": lambda t: t["Resources"].__setitem__("compute-quota-x", t["Resources"].pop(next(iter(t["Resources"])))),
            "a default ARN the pattern refuses": lambda t: t["Parameters"]["ClusterArn"].__setitem__("Default", "arn:x"),
        }
        for what, breaking in broken_templates.items():
            template = copy.deepcopy(template_sample)
            breaking(template)
            if not template_problems(model, template):
                failures.append(f"the validator accepted a CloudFormation template with {what}")

    for failure in failures:
        print(f"FAIL: {failure}")
    print(f"{len(policies)} policies, {documents} documents, {updates} documents against --current, "
          f"{templates} CloudFormation templates, "
          f"{len(broken) + len(broken_templates)} broken documents: "
          f"{'ok' if not failures else f'{len(failures)} failures'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
