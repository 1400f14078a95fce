// The DeepSpeed config keys zerotrain knows by name, as tables: those with a zerotrain key of the
// same meaning, those that change nothing here (with why), and features zerotrain lacks (with what
// to use instead). runtime/config/deepspeed_config.cpp reads a ds_config.json with them; keys with
// special handling (batch sizes, precision, optimizer, scheduler, activation checkpointing) are
// read there.
#pragma once

#include <map>
#include <string>

namespace zt::deepspeed_keys {

// DeepSpeed key (dotted) -> zerotrain key, same meaning and units.
const std::map<std::string, std::string>& direct();

// Keys that change nothing in zerotrain -> why (a note is printed).
const std::map<std::string, std::string>& no_op();

// Features zerotrain lacks -> what to use instead. A value that asks for nothing (false, an
// offload to device "none", a section with enabled: false, a partition size of 1) gets a note.
const std::map<std::string, std::string>& unsupported();

// DeepSpeed's optimizers other than Adam/AdamW (lower case) -> what they are, for the refusal.
const std::map<std::string, std::string>& other_optimizers();

}  // namespace zt::deepspeed_keys
