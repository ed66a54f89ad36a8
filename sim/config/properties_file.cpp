#include "sim/config/properties_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/config/options.h"

namespace pipesim::sim {
namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\f'; }

void append_utf8(std::string& out, unsigned code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

// Undoes the escapes of a key or value.
std::string unescape(const std::string& s, const std::string& path, int line) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char c = s[++i];
    switch (c) {
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        unsigned code = 0;
        for (int k = 0; k < 4; ++k) {
          const char h = i + 1 < s.size() ? s[++i] : '\0';
          const int digit = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                            : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
          if (digit < 0) {
            throw ConfigError("config error: " + path + ": line " + std::to_string(line) +
                              ": malformed \\uXXXX escape");
          }
          code = code * 16 + static_cast<unsigned>(digit);
        }
        append_utf8(out, code);
        break;
      }
      default: out += c;
    }
  }
  return out;
}

// True when the line ends in an odd number of backslashes (it continues).
bool continues(const std::string& line) {
  std::size_t n = 0;
  while (n < line.size() && line[line.size() - 1 - n] == '\\') ++n;
  return n % 2 == 1;
}

}  // namespace

std::vector<Property> parse_properties(const std::string& text, const std::string& path) {
  // Java's Properties.load(InputStream) reads ISO 8859-1: a UTF-8 byte-order
  // mark becomes three characters of the first key, which Kafka then ignores
  // as an unknown config. Said plainly rather than as that key's typo.
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) {
    throw ConfigError("config error: " + path +
                      ": line 1: starts with a UTF-8 byte-order mark, which Java's Properties.load "
                      "reads into the first key (Kafka would then ignore that key): save the file "
                      "without it");
  }
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
    throw ConfigError("config error: " + path + ": line " + std::to_string(line) +
                      ": a NUL byte (0x00): not a properties text file");
  }
  std::vector<std::string> lines;
  {
    std::string line;
    std::istringstream in(text);
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(line);
    }
  }
  std::vector<Property> out;
  std::map<std::string, std::size_t> index;  // key -> its entry in out
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const int first_line = static_cast<int>(n) + 1;
    std::size_t b = 0;
    while (b < lines[n].size() && blank(lines[n][b])) ++b;
    if (b == lines[n].size() || lines[n][b] == '#' || lines[n][b] == '!') continue;
    // The logical line: continuations joined, each one's leading blanks dropped.
    std::string logical = lines[n].substr(b);
    while (continues(logical) && n + 1 < lines.size()) {
      logical.pop_back();
      const std::string& next = lines[++n];
      std::size_t k = 0;
      while (k < next.size() && blank(next[k])) ++k;
      logical += next.substr(k);
    }
    if (continues(logical)) logical.pop_back();  // a last line's dangling backslash
    // The key ends at the first unescaped '=', ':' or blank.
    std::size_t end = 0;
    while (end < logical.size()) {
      const char c = logical[end];
      if (c == '\\') {
        end += 2;
        continue;
      }
      if (c == '=' || c == ':' || blank(c)) break;
      ++end;
    }
    end = std::min(end, logical.size());
    std::size_t v = end;
    while (v < logical.size() && blank(logical[v])) ++v;
    if (v < logical.size() && (logical[v] == '=' || logical[v] == ':')) ++v;
    while (v < logical.size() && blank(logical[v])) ++v;
    Property p{unescape(logical.substr(0, end), path, first_line), unescape(logical.substr(v), path, first_line),
               first_line};
    const auto [at, fresh] = index.emplace(p.key, out.size());
    if (fresh) {
      out.push_back(std::move(p));
    } else {
      out[at->second] = std::move(p);
    }
  }
  return out;
}

std::vector<Property> read_properties_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError("config error: cannot read " + path + ": Is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("config error: cannot read " + path + ": " + std::strerror(errno));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_properties(buffer.str(), path);
}

}  // namespace pipesim::sim
