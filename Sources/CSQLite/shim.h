// The system's SQLite (Debian: libsqlite3-dev), for Portico's own driver in PorticoData/SQLite.
#include <sqlite3.h>
