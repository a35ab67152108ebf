// What the report pages share: a page template with `@TITLE@` and `@DATA@` markers, filled in.
#pragma once

#include <string>
#include <string_view>

namespace gov::report {

/// `page` with every `@TITLE@` replaced by `title` (escaped for HTML here) and the `@DATA@`
/// marker by `script_json`, which must already be safe inside a `<script>` element
/// (support::json_for_script).
std::string fill_page(std::string_view page, std::string_view title, std::string_view script_json);

}  // namespace gov::report
