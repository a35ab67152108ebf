// How the suite's benchmarks are registered: repetitions reported as aggregates only, with the
// minimum and maximum next to Google Benchmark's mean, median, stddev and cv, so that the report
// (tools/bench-report) can show each number's spread.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

namespace gov::bench {

/// Repeats `b` `repetitions` times and reports the aggregates plus min and max.
inline benchmark::internal::Benchmark* repeated(benchmark::internal::Benchmark* b, int repetitions) {
  return b->Repetitions(repetitions)
      ->ReportAggregatesOnly(true)
      ->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
      ->ComputeStatistics("max", [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); });
}

}  // namespace gov::bench
