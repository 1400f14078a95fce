// Running gnuplot (Debian: gnuplot-nox) on a script file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace zt::plot {

// The gnuplot executable on PATH, if any.
std::optional<std::filesystem::path> find_gnuplot();

// Runs `gnuplot script` and waits for it. Throws zt::UserError when gnuplot is not installed or
// fails (with what it wrote to stderr).
void run_gnuplot(const std::filesystem::path& script);

// s as a gnuplot single-quoted string literal (a quote inside is doubled).
std::string gnuplot_quote(std::string_view s);

}  // namespace zt::plot
