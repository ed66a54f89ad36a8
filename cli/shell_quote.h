// POSIX shell quoting for the commands pipesim prints for the user to paste:
// "reproduce with", "finish with ... --resume", the extreme seeds' and
// shrink's `pipesim explain` lines. One implementation for all of them.
#pragma once

#include <string>

namespace pipesim::cli {

// Always single-quoted: 'it'\''s' (a quote closes, is escaped, reopens).
std::string shell_quote(const std::string& s);

// As it is when every character is one a shell takes literally
// ([A-Za-z0-9] and _ . / : = , + @ % -), otherwise shell_quote(s).
std::string shell_word(const std::string& s);

}  // namespace pipesim::cli
