// The system's SQLite (Debian: libsqlite3-dev), for Portico's own driver in PorticoStore/SQLite (and the read-only source in PorticoSources).
#define _GNU_SOURCE 1
#include <sqlite3.h>
#include <string.h>

// glibc's memmem (a linear-time search), which Swift's Glibc module does not always export: the
// bounded replacements of SQLite's instr() and replace() search with it.
static inline const void *portico_memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length) {
    return memmem(haystack, haystack_length, needle, needle_length);
}
