#ifndef CLIBFUZZER_H
#define CLIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for programs that have their own `main`
/// (libclang_rt.fuzzer_no_main): parses libFuzzer's flags from argv and fuzzes `callback`.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

/// The fuzz target's own entry point, which each `fuzz-*` target defines in Swift with
/// `@_cdecl("LLVMFuzzerTestOneInput")`. Declared here so that `main.swift` need not name the Swift
/// function: in a debug (non-whole-module) build, a `@_cdecl` function used as a C function
/// pointer from another file is emitted in that file too, and the link fails with a duplicate.
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
