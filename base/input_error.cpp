// File: base/input_error.cpp
#include "base/input_error.hpp"

#include <sys/resource.h>

#include <numeric>

#include "base/text.hpp"

namespace hetsim {
namespace {

std::string join(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const Diagnostic& d : ds) {
    if (!out.empty()) out += '\n';
    out += d.str();
  }
  return out;
}

// At most this many problems are reported; a file with a million bad keys gets a summary line.
constexpr size_t kMaxReported = 50;

std::vector<Diagnostic> capped(std::vector<Diagnostic> d, size_t not_kept) {
  if (d.size() <= kMaxReported) return d;
  const size_t more = d.size() - kMaxReported + not_kept;
  // Located at the first problem not shown, so that an editor jumps to where the rest begin.
  Diagnostic next = d[kMaxReported];
  d.resize(kMaxReported);
  d.push_back(Diagnostic{std::move(next.file), next.line, next.column, "",
                         "and " + std::to_string(more) + " more problem(s) not shown, the first of them here; fix these first"});
  return d;
}

}  // namespace

std::string Diagnostic::located_message(const std::string& outer) const {
  std::string out;
  if (!file.empty() && file != outer && line > 0) {  // (a command-line option has no line)
    out = "in " + file;
    if (line > 0) out += ':' + std::to_string(line) + (column > 0 ? ':' + std::to_string(column) : std::string());
    out += ", ";
  }
  if (!field.empty() && out.size() > 0) out += field + ": ";
  return out + message;
}

std::string Diagnostic::str() const {
  // Text from inputs (a name, a value, a path) reaches the terminal escaped: no terminal escape
  // sequence, control character or byte that is not UTF-8 is ever printed raw.
  std::string out = printable(file);
  if (line > 0) {
    out += ':' + std::to_string(line);
    if (column > 0) out += ':' + std::to_string(column);
  }
  out += ": error: ";
  if (!field.empty()) out += printable(field) + ": ";
  out += printable(message);
  return out;
}

InputError::InputError(std::vector<Diagnostic> diagnostics, size_t not_kept)
    : InputError(capped(std::move(diagnostics), not_kept), Capped{}) {}

InputError::InputError(std::vector<Diagnostic> diagnostics, Capped)
    : std::runtime_error(join(diagnostics)), diagnostics_(std::move(diagnostics)) {}

InputError::InputError(std::string file, std::string field, std::string message)
    : InputError(std::vector<Diagnostic>{Diagnostic{std::move(file), 0, 0, std::move(field), std::move(message)}}) {}

std::optional<InputError> InputError::relocated(std::string_view key, Diagnostic at, const std::string& prefix) const {
  if (diagnostics_.size() != 1 || diagnostics_.front().file != key || diagnostics_.front().line != 0) return std::nullopt;
  at.message = prefix + diagnostics_.front().message;
  InputError moved({std::move(at)});
  moved.set_machine_limit(machine_limit_);
  return moved;
}

InputError out_of_memory(const std::string& who) {
  rlimit limit{};
  const bool capped = ::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY;
  const std::string where = capped ? "ulimit -v " + std::to_string(limit.rlim_cur / 1024) : "memory";
  return InputError(where, "", who + " ran out of memory" + (capped ? " under the address-space limit; raise it (ulimit -v)" : "") +
                                   " or give it a smaller cluster or model")
      .set_machine_limit();
}

void Diagnostics::add(Diagnostic d) {
  if (items_.size() <= kMaxReported) {  // the shown ones and the first not shown (its location)
    items_.push_back(std::move(d));
  } else {
    ++not_kept_;
  }
}

void Diagnostics::throw_if_any() const {
  if (!items_.empty()) throw InputError(items_, not_kept_);
}

}  // namespace hetsim
