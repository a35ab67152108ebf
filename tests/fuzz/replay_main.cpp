// A plain driver for the fuzz targets, without libFuzzer: runs a target's
// LLVMFuzzerTestOneInput on every file named on the command line (directories are walked,
// sorted), so the committed seed corpora and crash regressions replay in the normal g++
// test run. A finding aborts, as it would under libFuzzer.
//   gov-fuzz-replay-NAME [--suffix=.gov] PATH... [--suffix=] PATH...
// `--suffix=S` keeps only files ending in S from the directories after it (`--suffix=`: all).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// Optional in a target, as under libFuzzer.
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

namespace fs = std::filesystem;

/// The files named by `arguments`: regular files as given, directories walked recursively
/// (in sorted order, so a failure is reproducible by its position).
std::vector<fs::path> inputs_of(const std::vector<std::string>& arguments, bool& ok) {
  std::vector<fs::path> files;
  std::string suffix;
  for (const std::string& argument : arguments) {
    std::error_code ec;
    if (argument.rfind("--suffix=", 0) == 0) {
      suffix = argument.substr(9);
    } else if (fs::is_directory(argument, ec)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::recursive_directory_iterator(argument, ec)) {
        const std::string name = entry.path().filename().string();
        const bool wanted = name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
        if (entry.is_regular_file() && wanted) found.push_back(entry.path());
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(argument, ec)) {
      files.emplace_back(argument);
    } else {
      std::fprintf(stderr, "replay: `%s` is neither a file nor a directory\n", argument.c_str());
      ok = false;
    }
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  bool ok = true;
  const std::vector<fs::path> files = inputs_of(std::vector<std::string>(argv + 1, argv + argc), ok);
  if (!ok) return 2;
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIRECTORY...: no input files\n", argv[0]);
    return 2;
  }
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.eof() && in.fail()) {
      std::fprintf(stderr, "replay: cannot read `%s`\n", file.c_str());
      return 2;
    }
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", file.c_str(), bytes.size());
    // A copy in its own allocation, so that AddressSanitizer sees reads past the end.
    std::vector<uint8_t> data(bytes.begin(), bytes.end());
    static const uint8_t kNothing = 0;  // libFuzzer never passes a null pointer, even for 0 bytes
    LLVMFuzzerTestOneInput(data.empty() ? &kNothing : data.data(), data.size());
  }
  std::fprintf(stderr, "replay: %zu inputs, no finding\n", files.size());
  return 0;
}
