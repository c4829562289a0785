// The declaration in include/CLibFuzzer.h is all this module provides; libFuzzer itself is
// linked from the toolchain's libclang_rt.fuzzer_no_main (see Package.swift).
#include "CLibFuzzer.h"
