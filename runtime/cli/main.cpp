#include <iostream>

#include "runtime/cli/cli.h"

int main(int argc, char** argv) { return zt::cli::run_cli(argc, argv, std::cout, std::cerr); }
