// File: base/yaml_reader.cpp
#include "base/yaml_reader.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "base/data_dir.hpp"
#include "base/text.hpp"
#include "base/yaml_tree.hpp"

namespace hetsim {
namespace {

// "0 to 4", "at least 0" (no upper bound), "at most 1" (no lower one), in the shortest exact form.
std::string range_text(double min, double max) {
  const auto num = [](double x) {
    for (int digits = 6; digits < 17; ++digits) {
      const std::string t = format_double(("%." + std::to_string(digits) + "g").c_str(), x);
      if (std::strtod(t.c_str(), nullptr) == x) return t;
    }
    return format_double("%.17g", x);
  };
  if (std::isinf(max)) return "at least " + num(min);
  if (std::isinf(min)) return "at most " + num(max);
  return num(min) + " to " + num(max);
}

}  // namespace

FieldReader::FieldReader(YAML::Node node, std::string path, std::shared_ptr<const std::string> file,
                         Diagnostics* diags, std::shared_ptr<const OverrideMarks> marks)
    : node_(std::move(node)), path_(std::move(path)), file_(std::move(file)), diags_(diags), marks_(std::move(marks)) {
  if (node_.IsDefined() && !node_.IsNull() && !node_.IsMap()) {
    diags_->add(at(node_, path_, "expected a mapping of fields"));
    valid_map_ = false;
  }
}

std::string FieldReader::field(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

Diagnostic FieldReader::at(const YAML::Node& node, std::string field, std::string message) const {
  if (marks_ != nullptr) {
    if (std::string origin = marks_->origin(node); !origin.empty()) {
      return Diagnostic{"--set " + origin, 0, 0, std::move(field), std::move(message)};
    }
  }
  const YAML::Mark m = node.Mark();
  const bool known = !m.is_null() && m.line >= 0;
  return Diagnostic{*file_, known ? m.line + 1 : 0, known ? m.column + 1 : 0, std::move(field), std::move(message)};
}

Diagnostic FieldReader::locate(std::string_view key, std::string message) const {
  if (valid_map_ && node_.IsMap()) {
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      if (it->first.Scalar() == key) return at(it->second, field(key), std::move(message));
    }
  }
  return at(node_, key.empty() ? path_ : field(key), std::move(message));
}

void FieldReader::error(std::string_view key, std::string message) { diags_->add(locate(key, std::move(message))); }

void FieldReader::error_here(std::string message) { diags_->add(at(node_, path_, std::move(message))); }

std::optional<YAML::Node> FieldReader::lookup(std::string_view key, bool required) {
  asked_.emplace(key);
  if (valid_map_ && node_.IsMap()) {
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      if (it->first.Scalar() == key) {
        if (it->second.IsNull()) {
          // An optional field written without a value is not taken as absent (its default): the
          // writer may have meant something else.
          diags_->add(at(it->second, field(key), required ? "has no value" : "has no value; leave the field out to take its default"));
          return std::nullopt;
        }
        return it->second;
      }
    }
  }
  if (required && valid_map_ && !absent_) diags_->add(at(node_, field(key), "missing required field"));
  return std::nullopt;
}

std::optional<std::string> FieldReader::scalar(std::string_view key, bool required) {
  std::optional<YAML::Node> n = lookup(key, required);
  if (!n) return std::nullopt;
  if (!n->IsScalar()) {
    diags_->add(at(*n, field(key), "expected a single value, not a list or mapping"));
    return std::nullopt;
  }
  return n->Scalar();
}

std::string FieldReader::text(std::string_view key) { return scalar(key, true).value_or(""); }

std::string name_problem(const std::string& v) {
  const bool control = printable(v) != v;  // a control character, a terminal escape, a bidirectional override, an invisible one
  // Characters, not bytes: every byte but UTF-8's continuation bytes starts one (printable() has
  // refused anything that is not UTF-8).
  const auto characters = static_cast<size_t>(std::count_if(v.begin(), v.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
  if (!v.empty() && characters <= 256 && !control) return {};
  return std::string(v.empty() ? "is empty" : control ? "has a control or invisible character" : "has " + std::to_string(characters) + " characters") +
         "; a name is 1 to 256 printable characters";
}

std::string FieldReader::name(std::string_view key) {
  const size_t problems = diags_->size();
  std::string v = text(key);
  if (diags_->size() != problems || !readable()) return v;  // missing, not text, or no mapping: already reported
  if (const std::string why = name_problem(v); !why.empty()) {
    error(key, why);
    return "";
  }
  return v;
}

std::optional<std::string> FieldReader::opt_text(std::string_view key) { return scalar(key, false); }

std::optional<std::string> FieldReader::opt_choice(std::string_view key, const std::vector<std::string>& allowed) {
  std::optional<std::string> v = scalar(key, false);
  if (!v) return std::nullopt;
  if (std::find(allowed.begin(), allowed.end(), *v) != allowed.end()) return v;
  error(key, in_quotes(*v) + " is not one of: " + join(allowed) + did_you_mean(*v, allowed));
  return std::nullopt;
}

std::optional<std::string> FieldReader::opt_choice(std::string_view key,
                                                   std::initializer_list<std::string_view> allowed) {
  return opt_choice(key, std::vector<std::string>(allowed.begin(), allowed.end()));
}

std::string FieldReader::choice(std::string_view key, const std::vector<std::string>& allowed) {
  if (!lookup(key, true)) return "";
  return opt_choice(key, allowed).value_or("");
}

std::string FieldReader::choice(std::string_view key, std::initializer_list<std::string_view> allowed) {
  return choice(key, std::vector<std::string>(allowed.begin(), allowed.end()));
}

std::optional<double> FieldReader::opt_quantity(std::string_view key, Unit unit, Bound bound) {
  std::optional<std::string> v = scalar(key, false);
  if (!v) return std::nullopt;
  ParsedQuantity q = parse_quantity(*v, unit);
  if (!q.ok()) {
    error(key, q.error);
    return std::nullopt;
  }
  if (bound == Bound::kPositive && q.value <= 0) {
    error(key, in_quotes(*v) + " must be greater than zero");
    return std::nullopt;
  }
  if (bound == Bound::kLinkRate && q.value < 1e6) {
    error(key, in_quotes(*v) + " is too slow for a link; expected at least 1MBps (8Mbps)");
    return std::nullopt;
  }
  if (bound == Bound::kLatency && q.value > 1.0) {
    error(key, in_quotes(*v) + " is too long for a latency; expected at most 1s");
    return std::nullopt;
  }
  return q.value;
}

std::optional<double> FieldReader::opt_quantity_at_least(std::string_view key, Unit unit, double min, std::string_view least) {
  const std::optional<double> v = opt_quantity(key, unit);
  if (v && *v < min) {
    error(key, in_quotes(*scalar(key, false)) + " is too small; expected at least " + std::string(least));
    return std::nullopt;
  }
  return v;
}

double FieldReader::quantity_at_least(std::string_view key, Unit unit, double min, std::string_view least) {
  if (!lookup(key, true)) return 0;
  return opt_quantity_at_least(key, unit, min, least).value_or(0);
}

double FieldReader::quantity(std::string_view key, Unit unit, Bound bound) {
  if (!lookup(key, true)) return 0;
  return opt_quantity(key, unit, bound).value_or(0);
}

std::optional<long> FieldReader::opt_integer(std::string_view key, long min, long max) {
  std::optional<std::string> v = scalar(key, false);
  if (!v) return std::nullopt;
  long out = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || p != v->data() + v->size()) {
    // "1e9": a whole number in exponent notation, within the range (checked as a double first,
    // so that no cast overflows).
    double d = 0;
    const auto [q, dec] = std::from_chars(v->data(), v->data() + v->size(), d);
    const bool whole = dec == std::errc() && q == v->data() + v->size() && std::isfinite(d) && d == std::floor(d);
    if (!whole) {
      error(key, in_quotes(*v) + " is not a whole number");
      return std::nullopt;
    }
    constexpr double kTwo63 = 9223372036854775808.0;  // a long holds less (LONG_MAX as a double rounds up to it)
    if (d < static_cast<double>(min) || d > static_cast<double>(max) || d >= kTwo63 || d < -kTwo63) {
      const bool below = d < static_cast<double>(min);
      error(key, *v + " is out of range; expected " +
                     (max == LONG_MAX && below ? "at least " + std::to_string(min) : std::to_string(min) + " to " + std::to_string(max)));
      return std::nullopt;
    }
    out = static_cast<long>(d);
  }
  if (out < min || out > max) {
    error(key, std::to_string(out) + " is out of range; expected " +
                   (max == LONG_MAX ? "at least " + std::to_string(min)
                                    : std::to_string(min) + " to " + std::to_string(max)));
    return std::nullopt;
  }
  return out;
}

long FieldReader::integer(std::string_view key, long min, long max) {
  if (!lookup(key, true)) return min;
  return opt_integer(key, min, max).value_or(min);
}

std::optional<double> FieldReader::opt_number(std::string_view key, double min, double max) {
  std::optional<std::string> v = scalar(key, false);
  if (!v) return std::nullopt;
  double out = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || p != v->data() + v->size() || std::isnan(out)) {
    error(key, in_quotes(*v) + " is not a number");
    return std::nullopt;
  }
  if (!(out >= min && out <= max)) {
    error(key, *v + " is out of range; expected " + range_text(min, max));
    return std::nullopt;
  }
  return out;
}

double FieldReader::number(std::string_view key, double min, double max) {
  if (!lookup(key, true)) return min;
  return opt_number(key, min, max).value_or(min);
}

std::optional<bool> FieldReader::opt_flag(std::string_view key) {
  std::optional<std::string> v = scalar(key, false);
  if (!v) return std::nullopt;
  if (*v == "true") return true;
  if (*v == "false") return false;
  error(key, in_quotes(*v) + " is not true or false");
  return std::nullopt;
}

std::vector<double> FieldReader::numbers(std::string_view key, double min, double max) {
  std::vector<double> out;
  std::optional<YAML::Node> n = lookup(key, true);
  if (!n) return out;
  if (!n->IsSequence() || n->size() == 0) {
    diags_->add(at(*n, field(key), "expected a non-empty list of numbers"));
    return out;
  }
  for (size_t i = 0; i < n->size(); ++i) {
    const YAML::Node x = (*n)[i];
    const std::string item = field(key) + "[" + std::to_string(i) + "]";
    double v = 0;
    const std::string text = x.IsScalar() ? x.Scalar() : "";
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (!x.IsScalar() || ec != std::errc() || p != text.data() + text.size() || std::isnan(v)) {
      diags_->add(at(x, item, in_quotes(text) + " is not a number"));
    } else if (!(v >= min && v <= max)) {
      diags_->add(at(x, item, text + " is out of range; expected " + range_text(min, max)));
    } else {
      out.push_back(v);
    }
  }
  return out;
}

std::vector<std::string> FieldReader::names(std::string_view key) {
  std::vector<std::string> out;
  std::optional<YAML::Node> n = lookup(key, true);
  if (!n) return out;
  if (!n->IsSequence() || n->size() == 0) {
    diags_->add(at(*n, field(key), "expected a non-empty list of names"));
    return out;
  }
  for (size_t i = 0; i < n->size(); ++i) {
    const YAML::Node x = (*n)[i];
    const std::string item = field(key) + "[" + std::to_string(i) + "]";
    if (!x.IsScalar()) {
      diags_->add(at(x, item, "is not a name (1 to 256 printable characters)"));
    } else if (const std::string why = name_problem(x.Scalar()); !why.empty()) {
      diags_->add(at(x, item, why));
    } else {
      out.push_back(x.Scalar());
    }
  }
  return out;
}

std::optional<std::vector<double>> FieldReader::opt_numbers(std::string_view key, double min, double max) {
  if (!lookup(key, false)) return std::nullopt;
  return numbers(key, min, max);
}

std::optional<YAML::Node> FieldReader::opt_node(std::string_view key) { return lookup(key, false); }

FieldReader FieldReader::child(std::string_view key) {
  std::optional<YAML::Node> n = lookup(key, true);
  FieldReader r(n.value_or(YAML::Node()), field(key), file_, diags_, marks_);
  r.absent_ = !n.has_value();
  return r;
}

std::optional<FieldReader> FieldReader::opt_child(std::string_view key) {
  std::optional<YAML::Node> n = lookup(key, false);
  if (!n) return std::nullopt;
  return FieldReader(*n, field(key), file_, diags_, marks_);
}

std::vector<FieldReader> FieldReader::list(std::string_view key) {
  std::vector<FieldReader> out;
  std::optional<YAML::Node> n = lookup(key, true);
  if (!n) return out;
  if (!n->IsSequence() || n->size() == 0) {
    diags_->add(at(*n, field(key), "expected a non-empty list"));
    return out;
  }
  if (n->size() > kMaxListEntries) {
    diags_->add(at(*n, field(key), "has " + std::to_string(n->size()) + " entries; a list of mappings holds at most " +
                                       std::to_string(kMaxListEntries)));
    return out;
  }
  for (size_t i = 0; i < n->size(); ++i) {
    out.emplace_back((*n)[i], field(key) + "[" + std::to_string(i) + "]", file_, diags_, marks_);
  }
  return out;
}

namespace {

// Whether an unknown key reads as a mistyped field name, worth quoting back: short, and of the
// characters field names have. Anything else (a line of some other file, such as a password
// file's, named where a cluster or model was expected) is described, not echoed.
bool field_like(std::string_view key) {
  return !key.empty() && key.size() <= 64 && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' || c == ' ';
  });
}

}  // namespace

void FieldReader::finish() {
  if (!valid_map_ || !node_.IsMap()) return;
  std::vector<std::string> valid(asked_.begin(), asked_.end());
  // A file none of whose top-level keys is a field, or reads as one, is another kind of file: said
  // once, not key by key (its lines are not quoted back).
  size_t plausible = 0, keys = 0;
  for (auto it = node_.begin(); it != node_.end(); ++it, ++keys) {
    plausible += asked_.contains(it->first.Scalar()) || field_like(it->first.Scalar()) ? 1 : 0;
  }
  if (path_.empty() && plausible == 0 && keys > 0) {
    diags_->add(at(node_.begin()->first, path_,
                   "none of its " + std::to_string(keys) + " top-level keys is a field here: not a file of the kind expected"));
    return;
  }
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (asked_.contains(key)) continue;
    const bool set = marks_ != nullptr && !marks_->origin(it->second).empty();  // a key a --set created
    const bool byte_order_mark = key.find("\xEF\xBB\xBF") != std::string::npos;  // U+FEFF, invisible in an editor
    const std::string what = key == "<<" ? "a YAML merge key (<<), which hetsim does not read: write the fields out"
                             : field_like(key) ? "unknown key " + in_quotes(key) + did_you_mean(key, valid)
                             : byte_order_mark ? "unknown key: it holds a byte-order mark (U+FEFF, invisible in most editors; one "
                                                 "at the very start of the file is allowed): delete it"
                                               : "unknown key (" + std::to_string(key.size()) + " bytes, not a field name)";
    diags_->add(at(set ? it->second : it->first, path_, what));
  }
}

YamlFile YamlFile::load(const std::filesystem::path& path) {
  YamlFile f = parse(path);
  if (!f.root_.IsMap()) {
    const YAML::Mark m = f.root_.Mark();
    const bool known = !m.is_null() && m.line >= 0;
    std::string what = "expected a mapping of fields at the top level";
    if (!f.root_.IsDefined() || f.root_.IsNull()) what += "; the file is empty";
    else if (f.root_.IsSequence()) what += ", not a list";
    else what += ", not a single value";
    throw InputError({Diagnostic{path.string(), known ? m.line + 1 : 1, known ? m.column + 1 : 1, "", what}});
  }
  return f;
}

YamlFile YamlFile::load_list(const std::filesystem::path& path) {
  YamlFile f = parse(path);
  if (!f.root_.IsSequence() || f.root_.size() == 0) {
    const YAML::Mark m = f.root_.Mark();
    const bool known = !m.is_null() && m.line >= 0;
    throw InputError({Diagnostic{path.string(), known ? m.line + 1 : 1, known ? m.column + 1 : 1, "",
                                 "expected a non-empty list of entries at the top level (\"- name: ...\")"}});
  }
  if (f.root_.size() > FieldReader::kMaxListEntries) {
    throw InputError(path.string(), "", "has " + std::to_string(f.root_.size()) + " entries; a list of entries holds at most " +
                                            std::to_string(FieldReader::kMaxListEntries));
  }
  return f;
}

namespace {

// Events of a document, kept only as far as whether it holds anything and where it starts.
class SecondDocument : public YAML::EventHandler {
 public:
  bool content = false;
  YAML::Mark mark;

  void OnDocumentStart(const YAML::Mark&) override { content = false; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { note(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { note(m); }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override { note(m); }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override { note(m); }
  void OnMapEnd() override {}

 private:
  void note(const YAML::Mark& m) {
    if (!content) mark = m;
    content = true;
  }
};

}  // namespace

YamlFile YamlFile::parse(const std::filesystem::path& path) {
  YamlFile f;
  f.file_ = std::make_shared<const std::string>(path.string());
  check_input_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), "", "cannot open file");
  // Read up to one byte past the cap, whatever the file's size says (it may grow, or be a /proc
  // file that says 0).
  std::string text(kMaxYamlFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) throw InputError(path.string(), "", "cannot be read");
  if (text.size() > kMaxYamlFileBytes) {
    throw InputError(path.string(), "", "is over " + std::to_string(kMaxYamlFileBytes) +
                                            " bytes; an input file is at most 2 MiB (the largest hetsim writes is under 0.5 MB)");
  }
  // yaml-cpp decodes UTF-16 and UTF-32 as it goes (a byte-order mark, or NUL bytes between the
  // characters): such a file would load, against the contract that inputs are UTF-8; a NUL byte is
  // in no YAML text.
  if (text.starts_with("\xFF\xFE") || text.starts_with("\xFE\xFF")) {
    throw InputError(path.string(), "", "starts with a UTF-16 or UTF-32 byte-order mark; hetsim reads every input as UTF-8: save it as UTF-8");
  }
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    const size_t line_start = text.rfind('\n', nul);
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n'));
    const int column = 1 + static_cast<int>(line_start == std::string::npos ? nul : nul - line_start - 1);
    throw InputError({Diagnostic{path.string(), line, column, "",
                                 "a NUL byte: not a text file, or UTF-16 or UTF-32 text; hetsim reads every input as UTF-8"}});
  }
  // Old Mac line ends (a CR alone) are line breaks to YAML 1.2 but not to yaml-cpp, which read
  // such a file as one comment line ("the file is empty"): read as LF, each line where it was.
  for (size_t i = text.find('\r'); i != std::string::npos; i = text.find('\r', i + 1)) {
    if (i + 1 >= text.size() || text[i + 1] != '\n') text[i] = '\n';
  }
  try {
    f.root_ = YAML::Load(text);
    // One document per file: a second one after "---" would be read by nothing, silently. Looked
    // for document by document (yaml-cpp 0.7's LoadAll never ends on some malformed text), and only
    // where a line starts with a document marker ("---" or "..."), without which there is none.
    const auto marker = [&](std::string_view m) { return text.starts_with(m) || text.find("\n" + std::string(m)) != std::string::npos; };
    std::istringstream stream(marker("---") || marker("...") ? text : std::string());
    YAML::Parser parser(stream);
    SecondDocument second;
    if (parser.HandleNextDocument(second) && parser.HandleNextDocument(second) && second.content) {
      const bool known = !second.mark.is_null() && second.mark.line >= 0;
      throw InputError({Diagnostic{path.string(), known ? second.mark.line + 1 : 1, known ? second.mark.column + 1 : 1, "",
                                   "a second YAML document (after \"---\"); an input file holds one"}});
    }
  } catch (const YAML::Exception& e) {
    throw InputError({yaml_parse_problem(e, path.string())});
  }
  std::vector<Diagnostic> problems = yaml_tree_problems(f.root_, path.string(), text.size());
  if (!problems.empty()) throw InputError(std::move(problems));
  return f;
}

FieldReader YamlFile::root(Diagnostics& diags) const { return FieldReader(root_, "", file_, &diags, marks_); }

void YamlFile::apply(const std::vector<FieldOverride>& sets) {
  if (sets.empty()) return;
  auto marks = std::make_shared<OverrideMarks>();
  if (marks_ != nullptr) *marks = *marks_;
  apply_overrides(root_, sets, *marks);
  marks_ = std::move(marks);
}

std::vector<FieldReader> YamlFile::items(Diagnostics& diags) const {
  std::vector<FieldReader> out;
  for (size_t i = 0; i < root_.size(); ++i) {
    std::string path("[");
    path.append(std::to_string(i)).append("]");
    out.emplace_back(root_[i], std::move(path), file_, &diags, marks_);
  }
  return out;
}

bool is_format_error(std::string_view message) {
  for (std::string_view p : {"unknown key", "none of its ", "missing required field", "expected a ", "has no value",
                             "has a control character", "is not a name"}) {
    if (message.starts_with(p)) return true;
  }
  return false;
}

}  // namespace hetsim
