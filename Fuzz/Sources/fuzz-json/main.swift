import FuzzSupport

runLibFuzzer()  // libFuzzer calls this target's LLVMFuzzerTestOneInput
