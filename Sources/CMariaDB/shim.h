// MariaDB Connector/C (Debian: libmariadb-dev), the client MySQL and MariaDB datasources are read
// with (PorticoSources, MySQLConnection). No Swift MySQL client is among Portico's packages.
#include <mysql.h>
#include <errmsg.h>
