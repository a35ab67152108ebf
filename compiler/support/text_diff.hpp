// A unified diff of two texts, line by line (`gov fmt --diff`).
#pragma once

#include <string>
#include <string_view>

namespace gov::support {

/// The unified diff (`diff -u` format, `context` lines around each change) that turns `before`
/// into `after`, with the headers `--- before_name` and `+++ after_name`; empty when the texts
/// are equal. Lines are compared whole, line ends included (a CRLF file that becomes LF differs
/// on every line). The edit is a shortest one for texts up to 2,000 changed lines after their
/// common start and end; beyond that the changed middle is shown as one removal and one
/// insertion (still a correct diff, bounded in time and memory).
std::string unified_diff(std::string_view before_name, std::string_view after_name, std::string_view before,
                         std::string_view after, int context = 3);

}  // namespace gov::support
