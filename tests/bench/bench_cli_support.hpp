// bench_cli_support.hpp: running the fibersync-bench binary from a test.
// The test's CMake target defines FIBERSYNC_BENCH_EXE and
// FIBERSYNC_BENCH_TEST_DIR.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fibersync::test {

// A fresh, empty directory named after the running test.
inline std::string test_dir() {
  namespace fs = std::filesystem;
  const fs::path d = fs::path(FIBERSYNC_BENCH_TEST_DIR) / ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

// Exit code of a shell command (output discarded); -1 if it did not exit.
inline int run_shell(const std::string& cmd) {
  const int st = std::system((cmd + " >/dev/null 2>&1").c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// Exit code of `fibersync-bench ARGS`, with environment assignments `env`.
inline int run_bench(const std::string& args, const std::string& env = "") {
  return run_shell(env + " " + std::string(FIBERSYNC_BENCH_EXE) + " " + args);
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Bad input: exit code 2 and no result file.
inline void expect_bad(const std::string& args) {
  const std::string d = test_dir();
  EXPECT_EQ(run_bench(args + " --out " + d + "/r"), 2) << args;
  EXPECT_TRUE(std::filesystem::is_empty(d)) << args << ": a result file was written";
}

}  // namespace fibersync::test
