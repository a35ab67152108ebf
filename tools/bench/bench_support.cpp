#include "tools/bench/bench_support.hpp"

#include <malloc.h>
#include <unistd.h>
#if GOV_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "compiler/check/check.hpp"
#include "compiler/check/program.hpp"
#include "compiler/driver/driver.hpp"
#include "compiler/jit/jit.hpp"
#include "compiler/lower/lower.hpp"
#include "runtime/trace/trace_reader.hpp"

namespace gov::bench {

std::string inputs_dir() {
  if (const char* env = std::getenv("GOV_BENCH_INPUTS"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "bench-inputs";
  return (exe.parent_path().parent_path() / "bench-inputs").string();
}

std::string input_path(const std::string& name) {
  return inputs_dir() + "/" + name;
}

std::unique_ptr<Policy> load_policy(const std::string& path, std::string& error) {
  driver::Result loaded = driver::load(driver::Source::file(path, "/"), driver::Request::up_to(driver::Stage::lower));
  if (!loaded.ok()) {
    error = loaded.error->kind == driver::ErrorKind::io
                ? loaded.error->message + " (run tools/gen-bench first)"
                : path + " does not check:\n" + loaded.error->message;
    return nullptr;
  }
  auto policy = std::make_unique<Policy>();
  policy->module = std::move(loaded.policy->module);
  policy->interp = std::make_unique<interp::Interpreter>(policy->module);
  auto jit = jit::compile_and_load(policy->module);
  if (jit.ok()) {
    policy->jit = std::move(jit).value();
  } else {
    policy->jit_error = jit.error().message;
  }
  return policy;
}

const Policy* cached_policy(const std::string& path, std::string& error) {
  struct Entry {
    std::unique_ptr<Policy> policy;
    std::string error;
  };
  static std::map<std::string, Entry> cache;
  auto it = cache.find(path);
  if (it == cache.end()) {
    Entry entry;
    entry.policy = load_policy(path, entry.error);
    it = cache.emplace(path, std::move(entry)).first;
  }
  error = it->second.error;
  return it->second.policy.get();
}

namespace {

gov::Event to_event(trace::TraceEvent& e) {
  switch (e.kind) {
    case trace::EventKind::submit:
      return gov::Event::submit(std::move(e.task));
    case trace::EventKind::finish:
      return gov::Event::finish(std::move(e.id));
    case trace::EventKind::cancel:
      return gov::Event::cancel(std::move(e.id));
  }
  return gov::Event::finish(std::move(e.id));
}

}  // namespace

bool read_trace_file(const std::string& path, const ir::Module& module, Trace& out,
                     std::string& error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "cannot read " + path + " (run tools/gen-bench first)";
    return false;
  }
  std::ostringstream buffer;
  buffer << file.rdbuf();
  const std::string text = buffer.str();
  trace::JsonLimits limits;
  limits.max_bytes = size_t{1} << 30;
  trace::TraceReader reader(text, module, limits);
  trace::TraceEvent event;
  out = {};
  while (reader.next(event)) {
    if (out.instants.empty() || out.instants.back().at != event.at)
      out.instants.push_back({event.at, {}});
    out.instants.back().events.push_back(to_event(event));
    ++out.events;
  }
  if (reader.error()) {
    error = path + ": " + reader.error()->message;
    return false;
  }
  return true;
}

namespace {

uint64_t status_kib(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(status, line)) {
    if (line.rfind(prefix, 0) == 0) return std::strtoull(line.c_str() + prefix.size(), nullptr, 10);
  }
  return 0;
}

}  // namespace

uint64_t resident_bytes() {
  return status_kib("VmRSS") * 1024;
}

uint64_t peak_resident_bytes() {
  return status_kib("VmHWM") * 1024;
}

uint64_t heap_bytes_in_use() {
#if GOV_JEMALLOC
  // jemalloc's statistics are a snapshot taken when the epoch advances.
  uint64_t epoch = 1;
  size_t size = sizeof epoch;
  mallctl("epoch", &epoch, &size, &epoch, size);
  size_t allocated = 0;
  size = sizeof allocated;
  if (mallctl("stats.allocated", &allocated, &size, nullptr, 0) != 0) return 0;
  return allocated;
#else
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
#endif
}

}  // namespace gov::bench
