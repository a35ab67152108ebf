#include "tests/support/test_support.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/check/schema.hpp"
#include "compiler/diagnostics/render.hpp"
#include "compiler/driver/driver.hpp"

namespace gov::test {

std::string repo_path(const std::string& relative) { return std::string(GOV_SOURCE_DIR) + "/" + relative; }

std::vector<std::string> files_under(const std::string& directory, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(repo_path(directory))) {
    const std::string path = entry.path().string();
    if (entry.is_regular_file() && path.size() >= suffix.size() &&
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(path);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string scratch_root() {
  static const std::string root = [] {
    const std::filesystem::path path = GOV_TEST_SCRATCH_DIR;
    std::filesystem::create_directories(path);
    if (!std::filesystem::exists(path / "gov.toml")) write_text((path / "gov.toml").string(), "");
    return path.string();
  }();
  return root;
}

TempDir::TempDir(const std::string& name) {
  static std::atomic<int> count{0};
  path_ = std::filesystem::path(scratch_root()) / (name + "-" + std::to_string(::getpid()) + "-" + std::to_string(count++));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

SmallVolume::SmallVolume(const std::string& path, const std::string& size) : path_(path), size_("size=" + size) {
  std::filesystem::create_directories(path);
  mounted_ = ::geteuid() == 0 && ::mount("tmpfs", path.c_str(), "tmpfs", 0, size_.c_str()) == 0;
}

SmallVolume::~SmallVolume() {
  if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
}

bool SmallVolume::make_read_only() {
  return mounted_ && ::mount("tmpfs", path_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, size_.c_str()) == 0;
}

void SmallVolume::fill(size_t keep_free) const {
  const std::string spare = path_ + "/spare";
  if (keep_free > 0) write_text(spare, std::string(keep_free, 's'));
  {
    std::ofstream out(path_ + "/fill", std::ios::binary);
    const std::string block(4096, 'x');
    while (out.write(block.data(), static_cast<std::streamsize>(block.size()))) out.flush();
  }
  std::error_code ignored;
  std::filesystem::remove(spare, ignored);
}

void SmallVolume::unfill() const {
  std::error_code ignored;
  std::filesystem::remove(path_ + "/fill", ignored);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& relative, const std::string& text) const {
  const std::filesystem::path file = path_ / relative;
  std::filesystem::create_directories(file.parent_path());
  write_text(file.string(), text);
  return file.string();
}

void TempDir::copy_catalog() const {
  const std::string catalog = "policies/catalog/aws-ml.gov";
  write(catalog, read_text(repo_path(catalog)));
}

CommandResult run_gov(const std::string& args) {
  static std::atomic<int> count{0};
  const std::string err_path = std::filesystem::path(scratch_root()) /
                               ("gov-stderr-" + std::to_string(::getpid()) + "-" + std::to_string(count++) + ".txt");
  const std::string command =
      "cd '" + std::string(GOV_SOURCE_DIR) + "' && '" + GOV_BINARY + "' " + args + " 2>'" + err_path + "'";
  CommandResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = read_text(err_path);
  std::filesystem::remove(err_path);
  return result;
}

Parsed parse_text(const std::string& text, const std::string& name) {
  Parsed parsed;
  const SourceId id = parsed.sources.add(name, text);
  parsed.result = check::parse_file(parsed.sources, id);
  return parsed;
}

std::string rendered(const Parsed& parsed) { return render_all(parsed.result.diagnostics, parsed.sources); }

namespace {

check::Program program_of(driver::Result loaded) {
  if (!loaded.policy) {
    check::Program failed;
    failed.read_failed = true;
    failed.read_error = loaded.error ? loaded.error->message : std::string("no program");
    return failed;
  }
  return std::move(loaded.policy->checked.program);
}

}  // namespace

check::Program program_from_text(const std::string& name, std::string text) {
  return program_of(driver::load(driver::Source::text(name, std::move(text)), driver::Request::up_to(driver::Stage::parse)));
}

check::Program program_from_file(const std::string& path, const std::string& root) {
  return program_of(driver::load(driver::Source::file(path, root), driver::Request::up_to(driver::Stage::parse)));
}

}  // namespace gov::test
