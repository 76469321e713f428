// The files one command reads and writes, checked together before it does
// any work (docs/usage.md, "Output files"): every output path can be written
// (check_output_path: directory, name length, kind of file), and no output is
// the same file as another output or an input. A refused command exits 2
// having created nothing. Also: what SIGINT/SIGTERM say while outputs are
// written. Used by the command line's commands (through report/reporters.hpp).
#pragma once

#include <string>
#include <vector>

#include "latlab/result.hpp"

namespace latlab {

class FilePlan {
 public:
  // `what` names the file in messages: the option ("--out") or "input 2".
  // An empty path is skipped.
  void input(std::string what, std::string path);
  void output(std::string what, std::string path);
  // A SQLite store, read and written in place ("" = the default location;
  // ResultsStore::open checks it); a postgresql:// URL is no file and is
  // skipped.
  void store(std::string what, const std::string& location);

  // Checks every output and that no two entries are the same file (by
  // device and inode where the file exists, else by normalised path). Two
  // outputs to one character device (/dev/null) are allowed; two to one
  // descriptor (standard output) are not. The error names both options.
  Result<void> check() const;

 private:
  struct Entry {
    std::string what;
    std::string path;
    bool written = false;          // an output or the store
    bool check_as_output = false;  // check_output_path (not the store: its opener checks)
  };
  std::vector<Entry> entries_;
};

// Whether writing `path` writes to this process's standard output ("-",
// /dev/stdout, /dev/fd/1).
bool names_stdout(const std::string& path);

// While alive, SIGINT and SIGTERM print, on stderr, what the command was
// writing and what it had kept, then end the process as the signal would
// have (a file being written keeps its previous contents; a store append is
// rolled back). One at a time.
class WritesInterruptScope {
 public:
  explicit WritesInterruptScope(std::string command);  // "latlab run"
  ~WritesInterruptScope();
  WritesInterruptScope(const WritesInterruptScope&) = delete;
  WritesInterruptScope& operator=(const WritesInterruptScope&) = delete;

  // Now writing `what`; `if_cut` says what an interrupt leaves of it.
  void writing(const std::string& what, const std::string& if_cut);
  // `what` is whole (e.g. "result 'r.json'").
  void kept(std::string what);

 private:
  void publish(const std::string& text);

  std::string command_;
  std::vector<std::string> kept_;
};

namespace store {

// $XDG_DATA_HOME/latlab/results.db, else $HOME/.local/share/latlab/results.db.
std::string default_store_location();

bool is_postgres_url(const std::string& location);

}  // namespace store
}  // namespace latlab
