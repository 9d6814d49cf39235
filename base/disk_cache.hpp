// File: base/disk_cache.hpp
// Results worth keeping between runs (the upper bound's homogeneous references), one file per
// entry under the user's cache folder: $HETSIM_CACHE_DIR, else $XDG_CACHE_HOME/hetsim, else
// $HOME/.cache/hetsim; HETSIM_CACHE_DIR=off keeps nothing.
//
// An entry is keyed by the full text of what it was computed from plus the build ID of the code
// that computed it (base/build_id.hpp), so a rebuild never reuses an older result. Its file name
// is the digest of that key, and the file holds the key whole: a read compares it byte for byte.
// Entries are written to a private temporary file and renamed into place, so runs sharing the
// folder at once each see a whole entry or none. Folders are made mode 0700, and entries are read,
// written and pruned only where the kind's folder is a directory (not a link) and it and its parent
// are this user's and writable by no one else; an entry is read only when it is a regular file (not
// a link) owned by this user. HETSIM_CACHE_DIR must be an absolute path. A cache that cannot be read or
// written is never an error: the result is computed again (a note says once why it is not kept).
// The folder is bounded: each store beyond `most_entries` entries removes the least recently used
// (a read refreshes an entry's time), and temporary files a killed run left behind are removed an
// hour on.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace hetsim {

class DiskCache {
 public:
  // The entries of `kind` (a folder name, e.g. "upper-bound") in the user's cache folder; off when
  // HETSIM_CACHE_DIR=off, when no folder is known (no HOME) or when the code has no build ID.
  [[nodiscard]] static DiskCache user(std::string_view kind);
  static constexpr size_t kMostEntries = 2000;  // per kind: a few kilobytes each
  // The entries of `kind` under `root` (tests).
  DiskCache(const std::filesystem::path& root, std::string_view kind, size_t most_entries = kMostEntries);

  [[nodiscard]] bool enabled() const { return !dir_.empty(); }
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  // The value stored under exactly `key`, if any.
  [[nodiscard]] std::optional<std::string> get(std::string_view key) const;
  // Stores `value` under `key`; returns false (and notes why, once per process) when it cannot.
  bool put(std::string_view key, std::string_view value) const;

 private:
  DiskCache() = default;
  [[nodiscard]] std::string full_key(std::string_view key) const;
  [[nodiscard]] std::filesystem::path entry(const std::string& full) const;
  // Removes the least recently used entries beyond most_entries_, and stale temporary files.
  void prune() const;
  // The kind's folder is a directory of this user's that no one else can change, in one such.
  [[nodiscard]] bool usable() const;
  std::filesystem::path dir_;  // empty: off
  size_t most_entries_ = kMostEntries;
};

}  // namespace hetsim
