#include "tools/lsp/workspace.hpp"

#include <filesystem>

namespace gov::lsp {

namespace fs = std::filesystem;

namespace {

/// The real path of `path` when it exists, else nullopt.
std::optional<std::string> existing(const std::string& path) {
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);
  if (ec) return std::nullopt;
  return real.string();
}

}  // namespace

std::string Checked::path_of(SourceId source) const {
  if (!result.policy) return {};
  const std::string& shown = result.policy->checked.program.sources.get(source).path();
  if (fs::path(shown).is_absolute()) return fs::path(shown).lexically_normal().string();
  // A shipped catalog imported by name (`import "aws-ml"`): where the driver finds it.
  for (const std::string& directory : driver::catalog_directories()) {
    const fs::path candidate = fs::path(directory) / (shown + ".gov");
    if (std::optional<std::string> real = existing(candidate.string())) return *real;
  }
  return {};
}

void Workspace::set_root(std::string root) {
  root_ = root.empty() ? std::string() : existing(root).value_or(fs::path(root).lexically_normal().string());
}

bool Workspace::inside(const std::string& path) const {
  if (root_.empty()) return true;
  const std::string real = existing(path).value_or(fs::path(path).lexically_normal().string());
  const fs::path relative = fs::path(real).lexically_relative(root_);
  return !relative.empty() && *relative.begin() != "..";
}

Document* Workspace::open(const std::string& uri, const std::string& path, std::string text, int64_t version) {
  auto it = documents_.find(uri);
  if (it == documents_.end()) {
    if (documents_.size() >= kMaxOpenDocuments) return nullptr;
    it = documents_.emplace(uri, Document{uri, path, {}, 0}).first;
  }
  it->second.text = std::move(text);
  it->second.version = version;
  return &it->second;
}

void Workspace::close(const std::string& uri) { documents_.erase(uri); }

Document* Workspace::find(const std::string& uri) {
  auto it = documents_.find(uri);
  return it == documents_.end() ? nullptr : &it->second;
}

Checked Workspace::check(const Document& document) const {
  const driver::Request request = driver::Request::up_to(driver::Stage::check, /*require_cluster=*/false);
  if (!existing(document.path)) {  // a new, unsaved file: its text alone
    return {driver::load(driver::Source::text(document.path, document.text), request)};
  }
  auto buffers = std::make_shared<driver::Source::Buffers>();
  for (const auto& [uri, open] : documents_) {
    if (std::optional<std::string> real = existing(open.path)) (*buffers)[*real] = open.text;
  }
  driver::Source source = driver::Source::file(document.path);
  source.with_buffers(std::move(buffers));
  return {driver::load(source, request)};
}

}  // namespace gov::lsp
