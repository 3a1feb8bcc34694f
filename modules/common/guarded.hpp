// The wrapper is lua-free-config/guarded.hpp, where the directive setters
// (lua-free-config/ depends on no module) reach it too. This name stays only
// for modules/ledger/pg_pool.cpp and statement_run.*, which were being
// edited for the write batches when it moved: they include
// lua-free-config/guarded.hpp next, and this file goes with its last user.
#pragma once

#include "lua-free-config/guarded.hpp"
