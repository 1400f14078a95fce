// "Did you mean ...?" for misspelled config keys, subcommands and options.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace zt {

// Edit distance counting insertions, deletions, substitutions and swaps of two neighbouring
// characters as one edit each, so the common typo "trian" is one edit away from "train".
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate most likely meant by `typed`: the closest one within a few edits (more edits are
// allowed for longer names), or one that `typed` is a prefix of. Nothing when no candidate is close
// enough to be a plausible typo, so that a suggestion is never a wild guess.
std::optional<std::string> nearest_name(std::string_view typed, std::span<const std::string> candidates);

}  // namespace zt
