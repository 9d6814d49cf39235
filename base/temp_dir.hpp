// File: base/temp_dir.hpp
// hetsim's one way to temporary files: a private folder per use (mkdtemp, mode 0700) under
// $TMPDIR (else /tmp), files made inside it exclusively (mkstemps: O_CREAT|O_EXCL, mode 0600),
// and the folder removed with everything in it when the object dies. Nothing is opened by a
// predictable name in a shared folder, so a link planted there cannot redirect a write.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace hetsim {

class TempDir {
 public:
  // Makes $TMPDIR/hetsim-PURPOSE-XXXXXX. Throws InputError naming TMPDIR (and its value) when
  // the folder cannot be made: TMPDIR missing, not a folder or not writable.
  explicit TempDir(const std::string& purpose);
  // Removes the folder and its contents, only in the process that made it (a forked child that
  // unwinds leaves its parent's folder alone). Never throws.
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  // A new file in the folder, STEM-XXXXXX SUFFIX (unique even when several processes share the
  // folder), created exclusively with mode 0600 and holding `text`; returns its path. `stem` is a
  // plain name (no '/'). Throws InputError naming the file when it cannot be made or written
  // whole (a full disk).
  [[nodiscard]] std::filesystem::path new_file(const std::string& stem, const std::string& suffix,
                                               std::string_view text = {}) const;

 private:
  std::filesystem::path path_;
  pid_t owner_ = -1;
};

}  // namespace hetsim
