// RAII owners of libpq handles, one definition for the blocking access of
// mrctl and the key catalogue and for the nginx worker's async pool.
#pragma once

#include <memory>

#include <libpq-fe.h>

namespace mr::pg {

struct ConnFree {
  void operator()(PGconn* c) const { PQfinish(c); }
};
struct ResultFree {
  void operator()(PGresult* r) const { PQclear(r); }
};
using Conn = std::unique_ptr<PGconn, ConnFree>;
using Result = std::unique_ptr<PGresult, ResultFree>;

}  // namespace mr::pg
