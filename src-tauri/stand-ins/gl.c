/*
 * A stand-in for LLVM in WebKit's web process, used only when the webview draws without a GPU.
 * WebKit insists on an EGL display there even though it never composites, so the process loads
 * Mesa's software driver, which links LLVM: relocating it costs 26 MiB of an idle app's memory
 * (docs/benchmarks.md#app-idle-memory), for a JIT that only llvmpipe uses. The web process is
 * started with GALLIUM_DRIVER=softpipe, Mesa's software rasteriser without LLVM, and this library
 * in LLVM's place (src-tauri/src/stand_ins.rs), only while Mesa's driver is the very file build.rs
 * built it for.
 *
 * build.rs compiles this file together with an alias for every other LLVM symbol that driver
 * imports. Mesa asks one question of LLVM even on the softpipe path; any other call aborts
 * with a message naming this file (ironclaw_missing below).
 */
#include "missing.h"

/* Debian's LLVM is built thread-safe; Mesa checks this when its driver loads. */
int LLVMIsMultithreaded(void) { return 1; }

IRONCLAW_MISSING(
    "IronClaw: Mesa called into LLVM, which the app's stand-in (src-tauri/stand-ins/gl.c) "
    "does not provide; run with IRONCLAW_GPU=on or build with IRONCLAW_STAND_INS=off\n")

/* What every data symbol the driver imports (C++ vtables and type information) is an alias
 * of; nothing reads them on the softpipe path. */
__attribute__((used)) static char ironclaw_zero[256];
