// fibersync-bench: thin main over the fibersync::bench library.
#include "fibersync/bench/cli.hpp"

int main(int argc, char** argv) { return fibersync::bench::run_main(argc, argv); }
