#include "cli/shell_quote.h"

#include <algorithm>
#include <string_view>

namespace pipesim::cli {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string shell_word(const std::string& s) {
  const auto literal = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_./:=,+@%-").find(c) != std::string_view::npos;
  };
  return !s.empty() && std::all_of(s.begin(), s.end(), literal) ? s : shell_quote(s);
}

}  // namespace pipesim::cli
