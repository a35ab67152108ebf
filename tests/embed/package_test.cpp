// libgov.so exports the API and nothing else, and `cmake --install` gives a tree that an outside
// project uses through find_package(gov) (C++17, shared and static) and through pkg-config (C).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tests/embed/embed_support.hpp"
#include "tests/support/test_support.hpp"

namespace {

using gov::test::quoted;
using gov::test::repo_path;
using gov::test::run_program;

bool sanitized() { return std::string(GOV_SANITIZED).size() > 0; }

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

/// The exported (global or weak, defined) dynamic symbols of a library, demangled.
std::vector<std::string> exported_symbols(const std::string& library) {
  const auto nm = run_program("nm -D -C --defined-only " + quoted(library));
  INFO(nm.err);
  REQUIRE(nm.exit_code == 0);
  std::vector<std::string> names;
  std::istringstream lines(nm.out);
  for (std::string line; std::getline(lines, line);) {
    // "0000000000045380 T gov::outcome_name(gov::Outcome)"; lower-case types are local.
    const size_t type_at = line.find(' ');
    if (type_at == std::string::npos || type_at + 2 >= line.size()) continue;
    const char type = line[type_at + 1];
    const bool global = (type >= 'A' && type <= 'Z') || type == 'u' || type == 'i' || type == 'v' || type == 'w';
    if (global) names.push_back(line.substr(type_at + 3));
  }
  return names;
}

bool is_api_symbol(const std::string& name) {
  if (starts_with(name, "gov_")) return true;  // the C ABI
  for (const char* prefix : {"gov::Engine::", "gov::Error::", "gov::PreparedTask::", "gov::to_json", "gov::read_trace(",
                             "typeinfo for gov::Error", "typeinfo name for gov::Error",
                             "vtable for gov::Error"}) {
    if (starts_with(name, prefix)) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("libgov.so exports only the API's symbols", "[embed][package]") {
  const std::vector<std::string> names = exported_symbols(GOV_SHARED_LIBRARY);
  std::vector<std::string> foreign;
  for (const std::string& name : names)
    if (!is_api_symbol(name)) foreign.push_back(name);
  INFO("exported but not API:\n" << [&] {
    std::string all;
    for (const auto& f : foreign) all += f + "\n";
    return all;
  }());
  CHECK(foreign.empty());
  // And the API is there: every C entry point of gov.h, the C++ classes.
  const std::string header = gov::test::read_text(repo_path("runtime/include/gov/gov.h"));
  size_t declared = 0;
  for (size_t at = header.find("GOV_API "); at != std::string::npos; at = header.find("GOV_API ", at + 1)) {
    const size_t open = header.find('(', at);
    const size_t name_start = header.rfind(' ', open) + 1;
    std::string name = header.substr(name_start, open - name_start);
    if (!name.empty() && name[0] == '*') name.erase(0, 1);
    ++declared;
    INFO(name);
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  }
  CHECK(declared > 30);
  CHECK(std::count_if(names.begin(), names.end(), [](const std::string& n) { return starts_with(n, "gov::Engine::submit("); }) == 1);
}

TEST_CASE("cmake --install gives a package an outside project builds against", "[embed][package]") {
  if (sanitized()) {
    WARN("the installed-package test needs a build without sanitizers");
    return;
  }
  gov::test::ScratchDir dir("package");
  const std::string prefix = dir / "prefix";
  const auto installed = run_program(quoted(GOV_CMAKE_COMMAND) + " --install " + quoted(GOV_BUILD_ROOT) + " --prefix " +
                                     quoted(prefix));
  INFO(installed.out << installed.err);
  REQUIRE(installed.exit_code == 0);
  const std::string libdir = [&] {
    for (const char* candidate : {"lib", "lib64", "lib/x86_64-linux-gnu"})
      if (std::filesystem::exists(dir / ("prefix/" + std::string(candidate) + "/libgov.a")))
        return prefix + "/" + candidate;
    return std::string();
  }();
  REQUIRE_FALSE(libdir.empty());
  for (const std::string& file : {prefix + "/bin/gov", prefix + "/include/gov/gov.h", prefix + "/include/gov/engine.hpp",
                                  prefix + "/include/gov/types.hpp", prefix + "/include/gov/export.h",
                                  libdir + "/libgov.so", libdir + "/libgov.so.0", libdir + "/libgov.a",
                                  libdir + "/cmake/gov/govConfig.cmake", libdir + "/cmake/gov/govConfigVersion.cmake",
                                  libdir + "/pkgconfig/gov.pc"}) {
    INFO(file);
    CHECK(std::filesystem::exists(file));
  }
  // The installed library and command do not point back into the build tree.
  const auto dynamic = run_program("readelf -d " + quoted(libdir + "/libgov.so") + " " + quoted(prefix + "/bin/gov"));
  CHECK(dynamic.out.find(GOV_BUILD_ROOT) == std::string::npos);
  CHECK(run_program(quoted(prefix + "/bin/gov") + " --help").exit_code == 0);

  // An outside C++17 project: find_package(gov), one program on libgov.so, one on libgov.a.
  const std::string project = dir / "consumer";
  std::filesystem::create_directories(project);
  gov::test::write_text(project + "/CMakeLists.txt", R"(cmake_minimum_required(VERSION 3.16)
project(consumer CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
find_package(gov 0.1 REQUIRED)
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE gov::runtime)
add_executable(consumer_static main.cpp)
target_link_libraries(consumer_static PRIVATE gov::runtime_static)
)");
  gov::test::write_text(project + "/main.cpp", R"(#include <gov/engine.hpp>
#include <iostream>
int main(int argc, char** argv) {
  if (argc != 2) return 2;
  try {
    gov::Engine engine = gov::Engine::compile_file(argv[1]);
    gov::Task a1;
    a1.id = "a1";
    a1.team = "team-a";
    a1.instance_type = "ml.g5.8xlarge";
    a1.set(gov::Resource::gpu, 3);
    std::cout << gov::to_json(engine.submit(a1, 0)) << "\n" << engine.policy().back_end << "\n";
  } catch (const gov::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
)");
  const std::string build = project + "/build";
  const auto configured = run_program(quoted(GOV_CMAKE_COMMAND) + " -S " + quoted(project) + " -B " + quoted(build) +
                                      " -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=" + quoted(GOV_CXX_COMPILER) +
                                      " -DCMAKE_PREFIX_PATH=" + quoted(prefix));
  INFO(configured.out << configured.err);
  REQUIRE(configured.exit_code == 0);
  const auto built = run_program(quoted(GOV_CMAKE_COMMAND) + " --build " + quoted(build));
  INFO(built.out << built.err);
  REQUIRE(built.exit_code == 0);
  const std::string expected =
      R"({"at":0,"task":"a1","outcome":"admitted","team":"team-a","flavor":"ml.g5.8xlarge","usage":{"gpu":3},"borrowed":{"gpu":1},"message":"Quota reserved in ClusterQueue team-a"})"
      "\njit\n";
  const std::string policy = quoted(repo_path("policies/examples/workshop-g5.gov"));
  for (const char* program : {"consumer", "consumer_static"}) {
    const auto run = run_program(quoted(build + "/" + program) + " " + policy);
    INFO(program << ": " << run.err);
    CHECK(run.exit_code == 0);
    CHECK(run.out == expected);
  }
  const auto linked = run_program("ldd " + quoted(build + "/consumer"));
  CHECK(linked.out.find(libdir + "/libgov.so.0") != std::string::npos);  // the installed library

  // An outside C program through pkg-config.
  gov::test::write_text(project + "/main.c", R"(#include <gov/gov.h>
#include <stdio.h>
int main(int argc, char** argv) {
  gov_engine* engine = NULL;
  if (argc != 2 || gov_engine_open_file(argv[1], NULL, &engine) != GOV_OK) {
    fprintf(stderr, "%s\n", gov_last_error());
    return 1;
  }
  gov_task task;
  gov_task_init(&task);
  task.id = "a1";
  task.team = "team-a";
  task.instance_type = "ml.g5.8xlarge";
  task.amounts[GOV_GPU] = 3;
  gov_decisions* step = NULL;
  if (gov_engine_submit(engine, 0, &task, &step) != GOV_OK) return 1;
  fputs(gov_decisions_json(step), stdout);
  gov_decisions_free(step);
  gov_engine_close(engine);
  return 0;
}
)");
  const std::string pkg = "PKG_CONFIG_PATH=" + quoted(libdir + "/pkgconfig") + " pkg-config";
  const auto compiled = run_program("cc -std=c99 -Wall -Werror -o " + quoted(project + "/c_consumer") + " " +
                                    quoted(project + "/main.c") + " $(" + pkg + " --cflags --libs gov)");
  INFO(compiled.out << compiled.err);
  REQUIRE(compiled.exit_code == 0);
  // gov.pc carries the rpath (issue 25): the binary runs without LD_LIBRARY_PATH.
  const auto c_run = run_program("env -u LD_LIBRARY_PATH " + quoted(project + "/c_consumer") + " " + policy);
  INFO(c_run.err);
  CHECK(c_run.exit_code == 0);
  CHECK(c_run.out + "jit\n" == expected);
}
