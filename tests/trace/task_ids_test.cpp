// The trace reader's table of task ids (runtime/trace/task_ids.hpp) against std::map, across
// its growth from 1,024 slots, with ids that collide in their low hash bits as often as chance has it.
#include "runtime/trace/task_ids.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compiler/support/id_index.hpp"
#include "runtime/trace/trace_reader.hpp"

using gov::trace::TaskIds;

TEST_CASE("the task id table finds what it holds and nothing else while it grows", "[trace][task-ids]") {
  TaskIds ids;
  std::map<std::string, TaskIds::Entry*> model;
  std::mt19937 random(7);
  CHECK(ids.find("t1") == nullptr);
  for (size_t i = 0; i < 20'000; ++i) {
    // Short ids, long ids and ids that differ in one character at the end.
    const std::string id = i % 3 == 0 ? "t" + std::to_string(random() % 30'000)
                           : i % 3 == 1 ? std::string(40, 'x') + std::to_string(random() % 30'000)
                                        : "team-a/job-" + std::to_string(i % 5'000) + "-" + std::to_string(i % 7);
    TaskIds::Entry* added = ids.insert(id);
    const bool fresh = model.find(id) == model.end();
    REQUIRE((added != nullptr) == fresh);
    if (fresh) {
      REQUIRE(added->id == id);
      REQUIRE(added->ended == TaskIds::kNotEnded);
      added->submitted = i;
      model[id] = added;
    }
    if (i % 97 == 0) {
      const std::string absent = "absent-" + std::to_string(i);
      REQUIRE(ids.find(absent) == nullptr);
    }
  }
  REQUIRE(ids.size() == model.size());
  // Every entry is found, at the address insert gave (entries never move), with what was stored.
  for (const auto& [id, entry] : model) {
    TaskIds::Entry* found = ids.find(id);
    REQUIRE(found == entry);
    REQUIRE(found->id == id);
  }
}

TEST_CASE("the id index moves an id to its latest position and keeps the others", "[trace][task-ids]") {
  // As the engine's TaskStore uses it: a resubmitted id points at its newest task.
  std::vector<std::string> ids;  // position -> id (the owner the index reads back)
  gov::IdIndex index;
  std::map<std::string, uint32_t> latest;
  const auto id_at = [&](uint32_t position) -> std::string_view { return ids[position]; };
  std::mt19937 random(3);
  for (uint32_t position = 0; position < 30'000; ++position) {
    ids.push_back("task-" + std::to_string(random() % 12'000));
    index.assign(ids.back(), position, id_at);
    latest[ids.back()] = position;
  }
  REQUIRE(index.size() == latest.size());
  for (const auto& [id, position] : latest) REQUIRE(index.find(id, id_at) == position);
  CHECK(index.find("task-x", id_at) == gov::IdIndex::kAbsent);
  // insert leaves a present id where it is.
  CHECK(index.insert(ids[0], 99'999, id_at) == latest[ids[0]]);
}
