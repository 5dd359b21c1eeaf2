// A malloc that counts, preloaded (LD_PRELOAD) into a running portico by
// Tests/EndToEnd/test_allocations.py and bench/run.sh: every call that allocates (malloc, calloc,
// realloc, posix_memalign, aligned_alloc, memalign) adds one, and SIGUSR2 writes the count so far
// to the file named by PORTICO_ALLOCATIONS_FILE. The memory itself comes from glibc's allocator,
// unchanged, so the process runs as it does without it.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static atomic_ullong allocations;
static char report_path[4096];

static inline void counted(void) { atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed); }

void *malloc(size_t size) {
    counted();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    counted();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    counted();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    counted();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    counted();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    counted();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *out = pointer;
    return 0;
}

// Only async-signal-safe calls: open, write, close.
static void report(int signal_number) {
    (void)signal_number;
    int saved = errno;
    unsigned long long n = atomic_load_explicit(&allocations, memory_order_relaxed);
    char text[32];
    int at = sizeof text;
    text[--at] = '\n';
    do {
        text[--at] = (char)('0' + n % 10);
        n /= 10;
    } while (n > 0);
    int fd = open(report_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
        ssize_t written = write(fd, text + at, sizeof text - at);
        (void)written;
        close(fd);
    }
    errno = saved;
}

__attribute__((constructor)) static void start_counting(void) {
    const char *path = getenv("PORTICO_ALLOCATIONS_FILE");
    if (path == NULL || strlen(path) >= sizeof report_path) return;
    strcpy(report_path, path);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = report;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGUSR2, &action, NULL);
}
