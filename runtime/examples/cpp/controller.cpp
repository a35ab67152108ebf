// A controller loop on the C++ API: open the policy (a store's active version, or a source
// file), then for each instant of a recorded trace apply its events together — as a controller
// applies what its informers delivered since the last reconcile — and print every decision as
// the JSON-lines stream `gov simulate` prints. Finally, tasks still pending are explained on
// stderr. Usage:
//   gov-example-cpp (--db STORE [--policy NAME] | --file POLICY.gov) --trace TRACE.json [--interp]
#include <gov/engine.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Arguments {
  std::string db, policy, file, trace;
  bool interpreter = false;
};

bool parse(int argc, char** argv, Arguments& args) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&](std::string& into) {
      if (i + 1 >= argc) return false;
      into = argv[++i];
      return true;
    };
    if (flag == "--db" && value(args.db)) continue;
    if (flag == "--policy" && value(args.policy)) continue;
    if (flag == "--file" && value(args.file)) continue;
    if (flag == "--trace" && value(args.trace)) continue;
    if (flag == "--interp") {
      args.interpreter = true;
      continue;
    }
    return false;
  }
  return !args.trace.empty() && (args.db.empty() != args.file.empty());
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw gov::Error(gov::ErrorCode::io, "cannot read `" + path + "`");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

int main(int argc, char** argv) {
  Arguments args;
  if (!parse(argc, argv, args)) {
    std::fprintf(stderr, "usage: gov-example-cpp (--db STORE [--policy NAME] | --file POLICY.gov) --trace TRACE.json [--interp]\n");
    return 2;
  }
  try {
    gov::Options options;
    options.policy = args.policy;
    if (args.interpreter) options.back_end = gov::Options::BackEnd::interpreter;
    gov::Engine engine = args.db.empty() ? gov::Engine::compile_file(args.file, options)
                                         : gov::Engine::open_store(args.db, options);
    const gov::PolicyInfo policy = engine.policy();
    std::fprintf(stderr, "policy `%s` version %lld (%s%s)\n", policy.name.c_str(),
                 static_cast<long long>(policy.version), policy.back_end.c_str(),
                 policy.cached_code ? ", cached native code" : "");

    const std::vector<gov::TimedEvent> trace = gov::read_trace(engine, read_file(args.trace));
    std::string out;
    // The reconcile loop: everything that happened at one instant is applied as one step.
    std::vector<gov::Event> batch;
    for (size_t i = 0; i < trace.size();) {
      const gov::Time at = trace[i].at;
      batch.clear();
      for (; i < trace.size() && trace[i].at == at; ++i) batch.push_back(trace[i].event);
      out += gov::to_json(engine.step(at, batch));
      if (out.size() > (1 << 16)) {
        std::fwrite(out.data(), 1, out.size(), stdout);
        out.clear();
      }
    }
    out += gov::to_json(engine.tick(gov::kForever));  // the durations still running
    std::fwrite(out.data(), 1, out.size(), stdout);

    const gov::Snapshot snapshot = engine.snapshot();
    for (const gov::TaskRow& task : snapshot.tasks) {
      if (task.state != gov::TaskState::pending) continue;
      if (auto why = engine.explain(task.id)) {
        std::fprintf(stderr, "still pending: %s (%s)\n", task.id.c_str(), why->message.c_str());
      }
    }
    return 0;
  } catch (const gov::Error& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
}
