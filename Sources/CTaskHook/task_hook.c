#include "task_hook.h"

// Declared by the Swift runtime (`swift/Runtime/Concurrency.h`) as a pointer to a function; only
// its address is taken here.
extern void *swift_task_enqueueGlobal_hook;

void **portico_task_enqueue_global_hook(void) { return &swift_task_enqueueGlobal_hook; }
