#ifndef STATESTORE_BENCHMARK_SQLITE_SHIM_H
#define STATESTORE_BENCHMARK_SQLITE_SHIM_H

// The raw-SQLite peer's own view of Debian's libsqlite3-dev: StateStore keeps its
// system-library target to itself, as a library should.
#include <sqlite3.h>

/// `SQLITE_TRANSIENT`: SQLite copies the bound bytes before the call returns.
static inline sqlite3_destructor_type csqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// `SQLITE_STATIC`: the bound bytes outlive the statement's next step or reset.
static inline sqlite3_destructor_type csqlite_static(void) {
    return SQLITE_STATIC;
}

#endif
