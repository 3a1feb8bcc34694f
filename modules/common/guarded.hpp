// The wrapper is lua-free-config/guarded.hpp, where the directive setters
// (lua-free-config/ depends on no module) reach it too. This name stays only
// for modules/ledger/pg_pool.cpp, which was being edited for the write
// batches when it moved: it includes lua-free-config/guarded.hpp next, and
// this file goes with it.
#pragma once

#include "lua-free-config/guarded.hpp"
