// The one escaper for text gov writes into HTML and XML (the simulation report, the what-if page,
// `gov test --format junit`), and the one way a JSON document is embedded in an HTML page.
#pragma once

#include <string>
#include <string_view>

namespace gov::support {

/// `text` safe inside an HTML or XML 1.0 text node or quoted attribute: `& < > " '` as entities
/// (`&#39;` for the apostrophe, which both read), and what XML cannot hold at all, the C0
/// controls (all but tab, LF and CR) and the noncharacters U+FFFE and U+FFFF, as U+FFFD.
std::string escape_markup(std::string_view text);

/// A JSON document made safe inside an HTML `<script>` element: every `<` (which only occurs
/// inside strings) written `\u003c`, so that no `</script>` can end the element; line breaks
/// between tokens dropped.
std::string json_for_script(std::string_view json);

}  // namespace gov::support
