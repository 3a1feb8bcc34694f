#include "modules/auth/catalogue_source.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <new>
#include <utility>
#include <vector>

#include "keys/catalogue_snapshot.hpp"
#include "keys/key_catalogue.hpp"
#include "ledger/sql/migrations.hpp"
#include "ngx-boundary/guarded.hpp"
#include "modules/common/request_reading.hpp"

namespace mr::auth {
namespace {

using mr::ngx::view;

struct Line {
  ngx_uint_t level;
  std::string text;
};
using Report = std::vector<Line>;

// libpq's messages run over several lines ("...failed: Connection refused\n\tIs
// the server running..."): one line in the error log.
std::string one_line(std::string text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n' && text[i] != '\r') {
      out += text[i];
      continue;
    }
    while (i + 1 < text.size() && (text[i + 1] == '\t' || text[i + 1] == ' ' || text[i + 1] == '\n')) ++i;
    if (!out.empty() && out.back() != '.') out += '.';
    out += ' ';
  }
  return out;
}

std::int64_t now_unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// "3d 2h 5m 7s", the largest units only as needed.
std::string age_text(std::int64_t ms) {
  std::int64_t s = ms > 0 ? ms / 1000 : 0;
  const std::int64_t d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60;
  s %= 60;
  std::string out;
  if (d > 0) out += std::to_string(d) + "d ";
  if (d > 0 || h > 0) out += std::to_string(h) + "h ";
  if (d > 0 || h > 0 || m > 0) out += std::to_string(m) + "m ";
  return out + std::to_string(s) + "s";
}

std::string utc_text(std::int64_t unix_ms) {
  const std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  char buf[32];
  if (gmtime_r(&t, &tm) == nullptr || std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) return "?";
  return buf;
}

// The catalogue lives as long as this configuration's cycle: placement new
// into cleanup storage, destroyed when the cycle's pool goes.
bool keep(ngx_conf_t* cf, mr_auth_main_conf_t* mcf, mr::KeyCatalogue&& catalogue) {
  ngx_pool_cleanup_t* cln = ngx_pool_cleanup_add(cf->pool, sizeof(mr::KeyCatalogue));
  if (cln == nullptr) return false;
  mcf->catalogue = new (cln->data) mr::KeyCatalogue(std::move(catalogue));
  cln->handler = mr::ngx::c_entry(+[](void* data) noexcept { static_cast<mr::KeyCatalogue*>(data)->~KeyCatalogue(); });
  return true;
}

// The newest migration these modules were built with: the catalogue's
// database must have it (a newer one is fine).
int newest_migration() {
  int newest = 0;
  for (const mr::Migration& m : mr::migrations()) newest = std::max(newest, m.version);
  return newest;
}

// Loud, at every load: with no key every signed request is unauthorized.
std::string no_keys(std::string_view env) {
  const std::string e(env);
  return "mr_auth: no active " + e + " key (of an active club) in the catalogue: every signed request will be "
         "answered unauthorized; issue one (mrctl key issue --ref <club> --env " + e +
         "), or check mr_environment and mr_catalogue_dsn";
}

ngx_int_t init_report_zone(ngx_shm_zone_t* zone, void*) noexcept {
  const auto* mcf = static_cast<const mr_auth_main_conf_t*>(zone->data);
  const auto* lines = static_cast<const Report*>(mcf->catalogue_report);
  bool fatal = false;
  if (lines != nullptr) {
    for (const Line& line : *lines) {
      ngx_log_error(line.level, zone->shm.log, 0, "%s", line.text.c_str());
      fatal = fatal || line.level == NGX_LOG_EMERG;
    }
  }
  return fatal ? NGX_ERROR : NGX_OK;
}

}  // namespace

bool report(ngx_conf_t* cf, mr_auth_main_conf_t* mcf, ngx_uint_t level, std::string text) {
  return mr::ngx::guarded(cf->log, false, [&] {
    if (mcf->catalogue_report == nullptr) {
      ngx_pool_cleanup_t* cln = ngx_pool_cleanup_add(cf->pool, sizeof(Report));
      if (cln == nullptr) return false;
      mcf->catalogue_report = new (cln->data) Report();
      cln->handler = mr::ngx::c_entry(+[](void* data) noexcept { static_cast<Report*>(data)->~Report(); });
    }
    static_cast<Report*>(mcf->catalogue_report)->push_back({level, std::move(text)});
    return true;
  });
}

ngx_int_t load_keys(ngx_conf_t* cf, mr_auth_main_conf_t* mcf, const mr::MasterKey& master) {
  const std::string_view env = view(mcf->environment), snapshot = view(mcf->catalogue_snapshot);
  const std::string snapshot_path(snapshot);
  const bool snapshot_on = snapshot != "off";
  std::string db_err;
  bool schema_behind = false;
  auto catalogue =
      mr::load_key_catalogue(view(mcf->catalogue_dsn), master, env, newest_migration(), schema_behind, db_err);
  db_err = one_line(std::move(db_err));
  if (schema_behind) {
    // Not an outage: these modules would run statements the database does
    // not have. The running configuration (a reload) keeps serving.
    return report(cf, mcf, NGX_LOG_EMERG, "mr_catalogue_dsn: " + db_err) ? NGX_OK : NGX_ERROR;
  }
  if (catalogue) {
    const std::int64_t read_ms = now_unix_ms();
    std::string err;
    if (snapshot_on && !mr::write_catalogue_snapshot(snapshot_path, *catalogue, master, env, read_ms, err) &&
        !report(cf, mcf, NGX_LOG_WARN,
                "mr_catalogue_snapshot: cannot write the last-known-good keys: " + err +
                    " (the keys loaded; but a start or reload while the database is down will fail)")) {
      return NGX_ERROR;
    }
    mcf->catalogue_from_snapshot = 0;
    mcf->catalogue_read_unix_ms = static_cast<ngx_msec_t>(read_ms);
    const std::string loaded = "mr_auth: " + std::to_string(catalogue->size()) + " active " + std::string(env) +
                               " keys loaded from the database";
    const bool none = catalogue->size() == 0;
    if (!keep(cf, mcf, std::move(*catalogue)) || !report(cf, mcf, NGX_LOG_NOTICE, loaded) ||
        (none && !report(cf, mcf, NGX_LOG_WARN, no_keys(env)))) {
      return NGX_ERROR;
    }
    return NGX_OK;
  }
  if (!snapshot_on) {
    return report(cf, mcf, NGX_LOG_EMERG,
                  "mr_catalogue_dsn: cannot load keys: " + db_err + " (and mr_catalogue_snapshot is off)")
               ? NGX_OK
               : NGX_ERROR;
  }
  std::string snap_err;
  auto snap = mr::read_catalogue_snapshot(snapshot_path, master, env, snap_err);
  if (!snap) {
    return report(cf, mcf, NGX_LOG_EMERG,
                  "mr_catalogue_dsn: cannot load keys: " + db_err + "; and no last-known-good snapshot to serve: " +
                      snap_err)
               ? NGX_OK
               : NGX_ERROR;
  }
  const std::int64_t age = now_unix_ms() - snap->read_unix_ms;
  const std::string line = "mr_catalogue_dsn: cannot load keys: " + db_err + "; serving the " +
                           std::to_string(snap->catalogue.size()) + " " + std::string(env) +
                           " keys of the snapshot \"" + snapshot_path + "\", read from the database " +
                           age_text(age) + " ago (" + utc_text(snap->read_unix_ms) +
                           "): keys issued or revoked since then take effect at the next reload that "
                           "reaches the database";
  mcf->catalogue_from_snapshot = 1;
  mcf->catalogue_read_unix_ms = static_cast<ngx_msec_t>(snap->read_unix_ms);
  const bool none = snap->catalogue.size() == 0;
  if (!keep(cf, mcf, std::move(snap->catalogue)) || !report(cf, mcf, NGX_LOG_WARN, line) ||
      (none && !report(cf, mcf, NGX_LOG_WARN, no_keys(env)))) {
    return NGX_ERROR;
  }
  return NGX_OK;
}

ngx_int_t add_catalogue_report(ngx_conf_t* cf, mr_auth_main_conf_t* mcf, void* tag) {
  static char name_text[] = "mr_catalogue_report";
  ngx_str_t name{sizeof name_text - 1, reinterpret_cast<u_char*>(name_text)};
  ngx_shm_zone_t* zone = ngx_shared_memory_add(cf, &name, 8 * ngx_pagesize, tag);
  if (zone == nullptr) return NGX_ERROR;
  zone->init = init_report_zone;
  zone->data = mcf;
  return NGX_OK;
}

}  // namespace mr::auth
