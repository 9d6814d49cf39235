// File: base/input_error.hpp
// User mistakes in input files, reported like compiler errors:
//   topologies/lab.yaml:14:9: error: node_types[1].nic.bandwidth: "100G" has no unit; write e.g. "100Gbps"
// InputError is for the user (exit code 2); anything else escaping to main is a bug (exit code 1).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hetsim {

// One problem in one input. line/column are 1-based; 0 means "not known" and is not printed.
struct Diagnostic {
  std::string file;
  int line = 0;
  int column = 0;
  std::string field;  // dotted path, e.g. "node_types[1].nic.bandwidth"; may be empty
  std::string message;

  // One line, "file:line:col: error: field: message", with the text escaped by printable()
  // (base/text.hpp).
  [[nodiscard]] std::string str() const;
  // The message as another input's error quotes it: with the file, line and field it is at when
  // that is not `outer` (a calibration profile named in a run file, a cluster a study's flag names).
  [[nodiscard]] std::string located_message(const std::string& outer = "") const;
};

// Every problem found in an input, thrown at once. what() is all lines joined by '\n'.
class InputError : public std::runtime_error {
 public:
  // More than 50 problems are cut to the first 50 and a line saying how many more there were,
  // located at the first of them. `not_kept`: problems counted beyond `diagnostics` but not kept
  // (Diagnostics keeps 51).
  explicit InputError(std::vector<Diagnostic> diagnostics, size_t not_kept = 0);
  InputError(std::string file, std::string field, std::string message);  // a single problem

  [[nodiscard]] const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  // A limit of the machine hetsim runs on (its memory, ulimit -v), not of the input: the same input
  // runs where the limit is higher. Callers never take it for a plan that does not fit.
  [[nodiscard]] bool machine_limit() const { return machine_limit_; }
  InputError& set_machine_limit(bool on = true) {
    machine_limit_ = on;
    return *this;
  }
  // Where this is one problem said of an input's key standing where a file would (line 0, e.g.
  // "training.global_batch"), the same problem said at `at` (its message after `prefix`), with
  // machine_limit() kept; nullopt otherwise. For a caller that knows where the value came from: an
  // option, a run file's line.
  [[nodiscard]] std::optional<InputError> relocated(std::string_view key, Diagnostic at, const std::string& prefix = "") const;
  // The diagnostics of another InputError (already cut to 50), e.g. one thrown in a simulation
  // process and passed back to its parent.
  [[nodiscard]] static InputError as_reported(std::vector<Diagnostic> diagnostics) { return InputError(std::move(diagnostics), Capped{}); }

 private:
  struct Capped {};
  InputError(std::vector<Diagnostic> diagnostics, Capped);
  std::vector<Diagnostic> diagnostics_;
  bool machine_limit_ = false;
};

// `who` ("the simulation", "hetsim") ran out of memory: a resource limit the user can change (exit
// code 2, like bad input), named with the address-space limit when one is set (ulimit -v).
[[nodiscard]] InputError out_of_memory(const std::string& who);

// Collects problems while a file is parsed and checked; throw_if_any() reports them together.
// Only the problems that will be shown are kept, the rest counted: a 4 MB file of two million
// bad values held two million messages (5.6 GB).
class Diagnostics {
 public:
  void add(Diagnostic d);
  [[nodiscard]] bool empty() const { return items_.empty(); }
  [[nodiscard]] size_t size() const { return items_.size() + not_kept_; }  // every problem added
  void throw_if_any() const;

 private:
  std::vector<Diagnostic> items_;
  size_t not_kept_ = 0;
};

}  // namespace hetsim
