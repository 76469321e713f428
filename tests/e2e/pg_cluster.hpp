// A throwaway PostgreSQL cluster for a test: initdb into a temp dir, the
// server on a unix socket in that dir only (no TCP), trust auth for the
// "latlab" role, stopped and removed on destruction. As root the server runs
// as the "postgres" user (PostgreSQL refuses to run as root). skip_reason
// says why no cluster could start (binaries missing, no user to run as).
#pragma once

#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "e2e/cli_run_helpers.hpp"

namespace latlab::e2e {

// The directory holding initdb and pg_ctl: $LATLAB_PG_BINDIR, else the
// newest /usr/lib/postgresql/<major>/bin (Debian's layout); "" if none.
inline std::string pg_bindir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("LATLAB_PG_BINDIR"); env != nullptr && *env != '\0') return env;
  std::string best;
  int best_major = -1;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const int major = std::stoi(name);
    if (major > best_major && fs::exists(e.path() / "bin" / "initdb") &&
        fs::exists(e.path() / "bin" / "pg_ctl")) {
      best_major = major;
      best = (e.path() / "bin").string();
    }
  }
  return best;
}

class PgCluster {
 public:
  PgCluster() {
    bindir_ = pg_bindir();
    if (bindir_.empty()) {
      skip_reason = "PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's "
                    "'postgresql' (scripts/install-deps.sh) or set LATLAB_PG_BINDIR";
      return;
    }
    std::string as;  // command prefix running the server's user
    if (geteuid() == 0) {
      const passwd* pw = getpwnam("postgres");
      if (pw == nullptr) {
        skip_reason = "running as root and there is no 'postgres' user to run the server as";
        return;
      }
      as = "runuser -u postgres -- ";
      if (chown(dir_.path.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
        error = "cannot hand the cluster's directory to the postgres user";
        return;
      }
    }
    const std::string d = dir_.path.string();
    std::string out;
    const int init = run_shell(as + bindir_ + "/initdb -D " + d + "/data -U latlab --auth=trust "
                               "-E UTF8 --no-sync >" + d + "/initdb.log 2>&1",
                               out);
    if (init != 0) {
      error = "initdb failed: " + slurp(dir_.path / "initdb.log");
      return;
    }
    const int start = run_shell(as + bindir_ + "/pg_ctl -D " + d +
                                    "/data -w -t 120 -l " + d + "/server.log -o \"-k " + d +
                                    " -c listen_addresses='' -p 5432 -c fsync=off\" start "
                                    ">/dev/null 2>&1",
                                out);
    if (start != 0) {
      error = "pg_ctl start failed: " + slurp(dir_.path / "server.log");
      return;
    }
    as_ = as;
    started_ = true;
    url = "postgresql:///postgres?host=" + d + "&port=5432&user=latlab";
  }
  ~PgCluster() {
    if (!started_) return;
    std::string out;
    run_shell(as_ + bindir_ + "/pg_ctl -D " + dir_.path.string() +
                  "/data -m immediate -w stop >/dev/null 2>&1",
              out);
  }
  PgCluster(const PgCluster&) = delete;
  PgCluster& operator=(const PgCluster&) = delete;

  std::string skip_reason;  // set: the test must skip with it
  std::string error;        // set: the cluster should have started and did not
  std::string url;          // libpq URL of the running server

 private:
  TempDir dir_;
  std::string bindir_;
  std::string as_;
  bool started_ = false;
};

}  // namespace latlab::e2e
