#include "runtime/report/page.hpp"

#include "compiler/support/markup.hpp"

namespace gov::report {

std::string fill_page(std::string_view page, std::string_view title, std::string_view script_json) {
  std::string out(page);
  const auto replace_all = [&out](std::string_view marker, std::string_view with) {
    for (size_t at = out.find(marker); at != std::string::npos; at = out.find(marker, at + with.size())) {
      out.replace(at, marker.size(), with);
    }
  };
  replace_all("@TITLE@", support::escape_markup(title));
  replace_all("@DATA@", script_json);
  return out;
}

}  // namespace gov::report
