// Entry point of gov::lsp: the Language Server Protocol server behind `gov lsp` (docs/editor.md).
#pragma once

namespace gov::lsp {

struct ServerOptions {
  /// Diagnostics are published once the input has been quiet this long after a change.
  int debounce_ms = 150;
};

/// Serves one client on `in_fd` / `out_fd` until `exit` or the end of the input. Returns the
/// process's exit status: 0 after `shutdown` then `exit`, 1 otherwise (as the protocol asks).
/// Malformed input, unknown methods and requests about files outside the workspace are
/// JSON-RPC errors; nothing the client sends ends the server but `exit` and the end of input.
int serve(int in_fd, int out_fd, const ServerOptions& options = {});

}  // namespace gov::lsp
