// `gov check --emit=ast`: the syntax tree as an indented S-expression.
#pragma once

#include <string>

#include "compiler/ast/ast.hpp"

namespace gov::ast {

struct PrintOptions {
  bool spans = true;  // append @begin..end to every node; off to compare trees across layouts
};

std::string print(const File& file, PrintOptions options = {});

}  // namespace gov::ast
