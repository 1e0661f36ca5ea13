// dispatch.cpp: data-parallel loops with lambdas through the C++ layer (taskdag.hpp).
//
// A saxpy with parallel_for, a dot product and a maximum with parallel_reduce, a prefix sum with
// exclusive_scan, and per-team block sums with parallel_team and team scratch memory; each result
// is checked against a serial computation. Lambdas are inlined in taskdag's range loops, so each
// index costs what the lambda costs.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <vector>

#include "taskdag.hpp"

using taskdag::index_t;

int main() {
  try {
    taskdag::runtime runtime;
    const taskdag::space threads = taskdag::space::threads();
    const index_t n = 1 << 20;
    std::vector<double> x(n), y(n);
    bool ok = true;

    // y = 2 x + y, with x[i] = i and y[i] = 1.
    taskdag::parallel_for(threads, 0, n, [&](index_t i) {
      x[i] = static_cast<double>(i);
      y[i] = 1.0;
    });
    taskdag::parallel_for(threads, 0, n, [&](index_t i) { y[i] += 2.0 * x[i]; });
    ok &= y[n - 1] == 2.0 * static_cast<double>(n - 1) + 1.0;

    // Dot product (sum), and the largest element (op::max).
    double dot = 0.0, largest = 0.0;
    taskdag::parallel_reduce(threads, 0, n, [&](index_t i, double& acc) { acc += x[i] * y[i]; },
                             dot);
    taskdag::parallel_reduce(
        threads, 0, n, [&](index_t i, double& acc) { acc = std::max(acc, y[i]); }, largest,
        taskdag::op::max);
    double serial_dot = 0.0;
    for (index_t i = 0; i < n; ++i) serial_dot += x[i] * y[i];
    ok &= std::abs(dot - serial_dot) <= 1e-12 * serial_dot && largest == y[n - 1];
    std::cout << "dot = " << dot << ", max = " << largest << " on " << threads.concurrency()
              << " thread(s)\n";

    // Offsets of variable-length rows: an exclusive prefix sum of the row lengths.
    std::vector<std::int64_t> lengths(n), offsets(n);
    for (index_t i = 0; i < n; ++i) lengths[i] = i % 7;
    const std::int64_t total = taskdag::exclusive_scan<std::int64_t>(
        threads, 0, n, [&](index_t i) { return lengths[i]; },
        [&](index_t i, std::int64_t offset) { offsets[i] = offset; });
    std::vector<std::int64_t> serial_offsets(n);
    std::exclusive_scan(lengths.begin(), lengths.end(), serial_offsets.begin(), std::int64_t{0});
    ok &= offsets == serial_offsets &&
          total == std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0});
    std::cout << "prefix sum: " << total << " entries in all\n";

    // Block sums of y: a league entry per block of 4096; each team member sums its part of the
    // block (team-level parallel_for) into the team's scratch memory, then the first member adds
    // the parts up (the values are integers, so every order of the sum is exact).
    const index_t block = 4096, blocks = n / block;
    const auto team_size = static_cast<index_t>(threads.concurrency());
    std::vector<double> block_sums(blocks);
    taskdag::parallel_team(threads, blocks, team_size, sizeof(double) * team_size,
                           [&](const taskdag::team_member& team) {
                             double* parts = team.scratch<double>();
                             const index_t first = team.league_rank() * block;
                             double mine = 0.0;
                             team.parallel_for(0, block, [&](index_t i) { mine += y[first + i]; });
                             parts[team.rank()] = mine;
                             team.barrier();
                             if (team.rank() == 0) {
                               double sum = 0.0;
                               for (index_t r = 0; r < team.size(); ++r) sum += parts[r];
                               block_sums[team.league_rank()] = sum;
                             }
                           });
    for (index_t b = 0; b < blocks; ++b) {
      double serial = 0.0;
      for (index_t i = 0; i < block; ++i) serial += y[b * block + i];
      ok &= block_sums[b] == serial;
    }
    std::cout << blocks << " block sums " << (ok ? "verified" : "WRONG") << '\n';
    if (!ok) return EXIT_FAILURE;
    std::cout << "dispatch.cpp: done\n";
    return EXIT_SUCCESS;
  } catch (const taskdag::error& e) {
    std::cerr << taskdag::status_name(e.status()) << ": " << e.what() << '\n';
    return EXIT_FAILURE;
  }
}
