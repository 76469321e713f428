#include <fmt/format.h>
#include <libpq-fe.h>

#include <cstdint>
#include <cstring>

#include "report/store/sql_connection.hpp"

namespace latlab::store {
namespace {

// libpq's text form of each parameter (NULL stays a null pointer).
struct TextParams {
  std::vector<std::optional<std::string>> text;
  std::vector<const char*> ptrs;

  explicit TextParams(const std::vector<SqlValue>& params) {
    for (const SqlValue& v : params) {
      if (const auto* i = std::get_if<int64_t>(&v)) {
        text.emplace_back(std::to_string(*i));
      } else if (const auto* d = std::get_if<double>(&v)) {
        text.emplace_back(fmt::format("{}", *d));  // shortest text that reads back exactly
      } else if (const auto* s = std::get_if<std::string>(&v)) {
        text.emplace_back(*s);
      } else {
        text.emplace_back(std::nullopt);
      }
    }
    for (const auto& t : text) ptrs.push_back(t ? t->c_str() : nullptr);
  }
};

// The connection string without a password, for messages.
std::string redact(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t at = url.find('@');
  if (scheme == std::string::npos || at == std::string::npos || at < scheme) return url;
  const size_t colon = url.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon) + ":***" + url.substr(at);
}

class PostgresConnection final : public SqlConnection {
 public:
  PostgresConnection(PGconn* conn, std::string name) : conn_(conn), name_(std::move(name)) {}
  ~PostgresConnection() override { PQfinish(conn_); }
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  const char* dialect() const override { return "postgresql"; }
  std::string param(int i) const override { return fmt::format("${}", i); }

  Result<std::vector<SqlRow>> query(const std::string& sql,
                                    const std::vector<SqlValue>& params) override {
    const TextParams tp(params);
    PGresult* res = PQexecParams(conn_, sql.c_str(), static_cast<int>(tp.ptrs.size()), nullptr,
                                 tp.ptrs.data(), nullptr, nullptr, 0);
    const ExecStatusType st = PQresultStatus(res);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      std::string why = PQresultErrorMessage(res);
      PQclear(res);
      return failure(sql, why);
    }
    std::vector<SqlRow> rows;
    for (int r = 0; r < PQntuples(res); ++r) {
      SqlRow row;
      for (int c = 0; c < PQnfields(res); ++c) {
        if (PQgetisnull(res, r, c)) {
          row.emplace_back(std::nullopt);
        } else {
          row.emplace_back(std::string(PQgetvalue(res, r, c),
                                       static_cast<size_t>(PQgetlength(res, r, c))));
        }
      }
      rows.push_back(std::move(row));
    }
    PQclear(res);
    return rows;
  }

  Result<void> execute_many(const std::string& sql,
                            const std::vector<std::vector<SqlValue>>& rows) override {
    if (rows.empty()) return {};
    PGresult* prep = PQprepare(conn_, "", sql.c_str(), static_cast<int>(rows[0].size()), nullptr);
    const bool ok = PQresultStatus(prep) == PGRES_COMMAND_OK;
    std::string why = ok ? "" : PQresultErrorMessage(prep);
    PQclear(prep);
    if (!ok) return failure(sql, why).error();
    for (const auto& params : rows) {
      const TextParams tp(params);
      PGresult* res = PQexecPrepared(conn_, "", static_cast<int>(tp.ptrs.size()), tp.ptrs.data(),
                                     nullptr, nullptr, 0);
      if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        why = PQresultErrorMessage(res);
        PQclear(res);
        return failure(sql, why).error();
      }
      PQclear(res);
    }
    return {};
  }

  Result<void> begin_write() override { return simple("BEGIN"); }
  Result<void> begin_read() override { return simple("BEGIN READ ONLY"); }

 private:
  Result<void> simple(const char* sql) {
    Result<std::vector<SqlRow>> r = query(sql, {});
    if (!r) return r.error();
    return {};
  }

  Result<std::vector<SqlRow>> failure(const std::string& sql, std::string why) const {
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    std::string first = sql.substr(0, sql.find('\n'));
    if (first.size() > 60) first = first.substr(0, 60) + "...";
    return make_error(fmt::format("PostgreSQL store {}: {} (in: {})", name_, why, first));
  }

  PGconn* conn_;
  std::string name_;
};

}  // namespace

Result<std::unique_ptr<SqlConnection>> open_postgres(const std::string& url) {
  PGconn* conn = PQconnectdb(url.c_str());
  if (conn == nullptr) return make_error("cannot connect to PostgreSQL: out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string why = PQerrorMessage(conn);
    PQfinish(conn);
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    return make_error(fmt::format("cannot connect to the PostgreSQL store {}: {}", redact(url), why));
  }
  // Notices (e.g. "relation already exists, skipping") are not the user's business.
  PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
  return std::unique_ptr<SqlConnection>(std::make_unique<PostgresConnection>(conn, redact(url)));
}

}  // namespace latlab::store
