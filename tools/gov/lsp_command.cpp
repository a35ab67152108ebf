// `gov lsp`: the language server, on standard input and output (docs/editors.md).
#include <unistd.h>

#include <csignal>

#include <fmt/format.h>

#include "tools/gov/commands.hpp"
#include "tools/lsp/server.hpp"

namespace gov::cli {
namespace {

int run_lsp(const Args& args) {
  if (!args.positional.empty()) {
    fmt::print(stderr, "error: `gov lsp` takes no arguments; it talks JSON-RPC on standard input and output\n");
    return kUsage;
  }
  // A client that stops reading must not kill the server with SIGPIPE mid-write.
  std::signal(SIGPIPE, SIG_IGN);
  return lsp::serve(STDIN_FILENO, STDOUT_FILENO);
}

}  // namespace

Command lsp_command() {
  return {{"lsp", "gov lsp",
           "Run the language server (LSP over standard input and output) for editors.",
           "Diagnostics as `gov check` reports them (on open and change, across imports: open buffers stand in\n"
           "for their files), hover (instance types, teams, classes, codes), completion, go to definition, find\n"
           "references, formatting (`gov fmt`), document symbols and quick fixes for the did-you-mean suggestions.\n"
           "Messages over 64 MiB, malformed headers or JSON, unknown methods and files outside the workspace are\n"
           "JSON-RPC errors. The VS Code extension in tools/editors/vscode starts it; docs/editors.md has the details.",
           {}},
          run_lsp};
}

}  // namespace gov::cli
