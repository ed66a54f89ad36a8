#include "cli/result_output.h"

#include <exception>
#include <iostream>

#include "cli/interrupts.h"
#include "sim/engine/interrupt.h"
#include "sim/report/output_file.h"

namespace pipesim::cli {

bool result_out_usable(const std::string& out,
                       const std::vector<std::pair<std::string, std::string>>& inputs) {
  if (out.empty()) return true;
  try {
    sim::check_output_path(out);
    sim::check_not_an_input(out, inputs);
  } catch (const std::exception& e) {
    std::cerr << "pipesim: " << e.what() << "\n";
    return false;
  }
  return true;
}

int emit_result(const std::string& text, const std::string& out) {
  if (out.empty()) {
    std::cout << text << std::flush;
    if (!std::cout) {  // e.g. > /dev/full: say so rather than exit 0 with nothing written
      std::cerr << "pipesim: cannot write the result to standard output\n";
      return 2;
    }
    return 0;
  }
  try {
    sim::write_file_atomically(out, text);
  } catch (const sim::Interrupted& e) {
    return interrupted(e.signal());  // 128 + signal, no file left
  } catch (const std::exception& e) {
    std::cerr << "pipesim: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace pipesim::cli
