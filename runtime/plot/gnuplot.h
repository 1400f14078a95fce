// Running gnuplot (Debian: gnuplot-nox) on a script file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace zt::plot {

// The gnuplot executable on PATH, if any.
std::optional<std::filesystem::path> find_gnuplot();

// Runs `gnuplot script` in the script's directory and waits for it. Throws zt::UserError when gnuplot is not installed or
// fails (with what it wrote to stderr).
void run_gnuplot(const std::filesystem::path& script);

// s as a gnuplot single-quoted string literal (a quote inside is doubled, control characters such
// as a line break become '?'). Only for labels: paths never go into a script (see curves_chart.cpp).
std::string gnuplot_quote(std::string_view s);

}  // namespace zt::plot
