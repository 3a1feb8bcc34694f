// The last-known-good key catalogue on local disk, so that nginx never
// depends on the database to start, reload or test its configuration:
// written after every load from the database, read when the database
// cannot be reached. Sealed with AES-256-GCM under the master key
// (keys/secret_box); the format and the environment are the associated
// data, so a snapshot sealed under another master key, of the other
// environment, or changed by a single bit, does not open. No nginx header.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "keys/key_catalogue.hpp"
#include "keys/secret_box.hpp"

namespace mr {

struct CatalogueSnapshot {
  KeyCatalogue catalogue;
  std::int64_t read_unix_ms = 0;  // when these keys were read from the database
};

// The file's bytes: a clear header (format, environment) and the sealed
// keys. "" when OpenSSL fails or the catalogue is too large to seal.
std::string seal_catalogue(const KeyCatalogue& catalogue, const MasterKey& master, std::string_view environment,
                           std::int64_t read_unix_ms);
// nullopt + err for anything but a snapshot of `environment` sealed under
// `master` and unchanged since.
std::optional<CatalogueSnapshot> open_catalogue(std::string_view bytes, const MasterKey& master,
                                                std::string_view environment, std::string& err);

// Writes `path` whole or not at all: a temporary file of mode 0600 in the
// same folder, flushed to disk, then renamed over it. false + err.
bool write_catalogue_snapshot(std::string_view path, const KeyCatalogue& catalogue, const MasterKey& master,
                              std::string_view environment, std::int64_t read_unix_ms, std::string& err);
// Reads `path`, which must keep the private-file rule (keys/private_file.hpp).
std::optional<CatalogueSnapshot> read_catalogue_snapshot(std::string_view path, const MasterKey& master,
                                                         std::string_view environment, std::string& err);

}  // namespace mr
