// Safe display of user-controlled text (paths, names, messages) on terminals and in CI logs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/support/utf8.hpp"

namespace gov {

/// Whether `c` changes the direction in which text is displayed (Trojan Source,
/// CVE-2021-42574): the embeddings and overrides U+202A-U+202E, the isolates U+2066-U+2069,
/// and the invisible marks U+200E, U+200F and U+061C.
bool is_bidi_control(uint32_t c);

/// Whether `c` is drawn as nothing, or as blank although it is not an ASCII space: zero-width
/// and other format characters (U+200B-U+200D, U+2060-U+2064, U+FEFF, U+00AD, ...), the
/// Unicode spaces (U+00A0, U+2000-U+200A, U+3000, ...), the line and paragraph separators
/// and the Hangul fillers. Bidi controls and C0/C1 controls are not included.
bool is_invisible(uint32_t c);

/// Whether escape_for_terminal() escapes `c`: C0 controls, DEL, C1 controls, bidi controls
/// and invisible characters.
bool is_unsafe_for_terminal(uint32_t c);

/// "U+202E RIGHT-TO-LEFT OVERRIDE": the code point and, for the characters this file
/// classifies (controls, bidi, invisible), its Unicode name; otherwise just "U+" and the code point in hex ("U+E000").
std::string describe_code_point(uint32_t c);

/// One code point as a readable escape, as Rust's `{:?}` writes it: `\n`, `\r`, `\t`, other
/// ASCII controls as `\x1b`, everything else as `\u{202e}`.
std::string escape_code_point(uint32_t c);

/// `text` with every character a terminal or a CI log would act on or hide replaced by its
/// readable escape (escape_code_point), and every byte that is not UTF-8 written `\xff`.
/// Other text, backslashes included, is copied, so that messages quoting gov's own escapes
/// (`\n` in a string) read as before. The result never contains a control character, a
/// bidi control or an invisible character, and is valid UTF-8.
std::string escape_for_terminal(std::string_view text);

/// escape_for_terminal() of each line of `text`, the line breaks kept: multi-line text for a
/// terminal (a failure report, an explanation) whose lines quote names and messages.
std::string escape_lines_for_terminal(std::string_view text);

/// A file path for messages: escape_for_terminal() with backslashes doubled, so that the
/// text names exactly one path (`a\nb` is a newline, `a\\nb` a backslash).
std::string display_path(std::string_view path);

}  // namespace gov
