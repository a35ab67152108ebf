// Entry point of gov::lower: a checked policy -> the IR module both back ends evaluate.
#pragma once

#include "compiler/check/policy.hpp"
#include "compiler/ir/module.hpp"

namespace gov::lower {

/// Lowers a checked, complete policy (it has a cluster). Flavors are every instance type
/// of the cluster's catalog, in catalog order (so any type a task names has an index);
/// teams, classes and rules keep their declared order. Rules become straight-line code:
/// the condition first, then the values its message interpolates.
ir::Module lower(const check::Policy& policy);

}  // namespace gov::lower
