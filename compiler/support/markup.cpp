#include "compiler/support/markup.hpp"

namespace gov::support {

std::string escape_markup(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += "\xEF\xBF\xBD";
        } else if (text.substr(i, 3) == "\xEF\xBF\xBE" || text.substr(i, 3) == "\xEF\xBF\xBF") {
          out += "\xEF\xBF\xBD";  // U+FFFE and U+FFFF, which XML 1.0 cannot hold either
          i += 2;
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string json_for_script(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') {
      out += "\\u003c";
    } else if (c != '\n') {  // JSON strings hold no raw line break: this is whitespace
      out += c;
    }
  }
  return out;
}

}  // namespace gov::support
