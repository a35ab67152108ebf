// Helpers for the store tests (see store_fixture.hpp).
#include "tests/store/store_fixture.hpp"

#include <fmt/format.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>

namespace gov::store::test {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "gov-store-XXXXXX").string();
  const char* made = ::mkdtemp(pattern.data());
  REQUIRE(made != nullptr);
  root_ = made;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::permissions(root_, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add, ignored);
  std::filesystem::remove_all(root_, ignored);
}

std::string TempDir::path(std::string_view name) const { return fmt::format("{}/{}", root_, name); }

std::vector<PolicyFile> marked_files(std::string_view marker, int imports) {
  std::vector<PolicyFile> files;
  std::string entry = fmt::format("// marker {}\n", marker);
  for (int i = 0; i < imports; ++i) entry += fmt::format("import \"lib{}.gov\"\n", i);
  entry += fmt::format("team team-a {{\n  fair-share-weight = 1\n}}\n");
  files.push_back({"policy.gov", entry});
  for (int i = 0; i < imports; ++i) {
    files.push_back({fmt::format("lib{}.gov", i), fmt::format("// marker {}\n// import {}\n", marker, i)});
  }
  return files;
}

ApplyRequest apply_request(std::string_view policy, std::vector<PolicyFile> files,
                           std::string_view message) {
  ApplyRequest request;
  request.policy = std::string(policy);
  request.files = std::move(files);
  request.author = "tester";
  request.message = std::string(message);
  return request;
}

std::string whole_version_problem(const Version& version) {
  if (version.files.empty()) return "no files";
  if (content_hash(version.files) != version.info.content_sha256) {
    return fmt::format("version {}: the files do not hash to the content hash", version.info.number);
  }
  const std::string& entry = version.files.front().text;
  std::string first_line = entry.substr(0, entry.find('\n'));
  for (const PolicyFile& file : version.files) {
    if (file.text.rfind(first_line + "\n", 0) != 0) {
      return fmt::format("version {}: `{}` lacks `{}`", version.info.number, file.path, first_line);
    }
  }
  std::string marker = first_line.substr(first_line.rfind(' ') + 1);
  if (version.info.message.find(marker) == std::string::npos) {
    return fmt::format("version {}: message `{}` does not name marker `{}`", version.info.number,
                       version.info.message, marker);
  }
  return {};
}

std::string integrity(Store& store) {
  auto report = store.integrity_check();
  return report ? *report : report.error().message;
}

Store open_or_fail(const std::string& path, const OpenOptions& options) {
  auto store = Store::open(path, options);
  if (!store) FAIL(store.error().message);
  return std::move(*store);
}

}  // namespace gov::store::test
