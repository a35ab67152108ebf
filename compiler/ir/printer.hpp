// `gov check --emit=ir`: the IR module as readable text.
#pragma once

#include <string>

#include "compiler/ir/module.hpp"

namespace gov::ir {

/// The module as text: settings, the flavors in use, classes, teams with their resolved
/// quotas, and each rule's instructions (`%3 = gt %1, %2 : boolean`). Deterministic.
std::string print(const Module& module);

std::string_view op_name(Op op);
std::string_view type_name(ValueType type);

}  // namespace gov::ir
