// The system's Cairo (Debian: libcairo2-dev), which PorticoCharts draws chart images with.
#include <cairo.h>
