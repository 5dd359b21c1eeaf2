#ifndef PORTICO_TASK_HOOK_H
#define PORTICO_TASK_HOOK_H

/// The address of Swift concurrency's `swift_task_enqueueGlobal_hook`, resolved by the linker:
/// found whether the runtime is a shared library or linked into the binary (`--static-swift-stdlib`
/// keeps its symbols out of the dynamic table, where `dlsym` would look).
void **portico_task_enqueue_global_hook(void);

#endif
