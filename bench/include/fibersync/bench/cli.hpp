// cli.hpp: the fibersync-bench command line (docs/bench.md).
#pragma once

namespace fibersync::bench {

// Parses the command line, runs the sweep (one forked child per run), writes
// <PREFIX>.csv and <PREFIX>.json and prints the CSV path. Exit codes: 0 ok,
// 1 a run failed, or text_stats / gauss verification failed, 2 bad input, 130 interrupted.
int run_main(int argc, char** argv);

}  // namespace fibersync::bench
