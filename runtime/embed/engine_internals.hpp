// What gov's own tools (the `gov` command, the test library) need of a gov::Engine beyond the
// API: the compiled policy it runs, to read traces and tasks against it and to find its test
// blocks. Not installed; not part of the API.
#pragma once

#include <memory>

#include "compiler/ir/module.hpp"
#include "gov/engine.hpp"
#include "compiler/driver/driver.hpp"

namespace gov {

class EngineInternals {
 public:
  /// The IR module of the version the engine runs now; it stays valid while the pointer is
  /// held, also across reloads.
  static std::shared_ptr<const ir::Module> module(const Engine& engine);
  /// The whole compiled policy the engine runs now (its checked program: test blocks, sources).
  static std::shared_ptr<const driver::Policy> runnable(const Engine& engine);
  /// Whether the calling thread is inside one of the engine's callbacks (it holds the engine's
  /// state lock, or it is the engine's watcher): closing the engine there would free it under
  /// the step that runs the callback, or make the watcher join itself.
  static bool in_own_callback(const Engine& engine);
};

}  // namespace gov
