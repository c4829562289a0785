// swift-tools-version:6.1
import Foundation
import PackageDescription

// libFuzzer targets for what StateStore reads from outside: kernel text, export documents (and
// their import into a database), stored hierarchy archives, JSON, key files. A package of its
// own so that the library's build, tests and CI never compile or link a fuzzer. Build and run
// them with `Fuzz/run`; docs/fuzzing.md says why the build looks the way it does. In short:
//
// - `swift build --sanitize=fuzzer` cannot be used: it compiles every executable with
//   `-parse-as-library` and links libFuzzer's `main` into it, and StateStore's build-tool plugin
//   runs an executable (`embed-migrations`) with top-level code and its own `main`.
// - So `Fuzz/run` instruments everything for coverage and ASan (`--sanitize=address
//   -Xswiftc -sanitize-coverage=...`), and only the `fuzz-*` targets link libFuzzer, in its
//   no-main form: each target defines `LLVMFuzzerTestOneInput` and its `main.swift` calls
//   `runLibFuzzer()`, which hands it to `LLVMFuzzerRunDriver`.
let stateStore: Target.Dependency = .product(name: "StateStore", package: "StateStore")
let stateStoreCrypto: Target.Dependency = .product(name: "StateStoreCrypto", package: "StateStore")

/// The toolchain's compiler-rt directory, holding libclang_rt.fuzzer_no_main-<arch>.a:
/// `$LIBFUZZER_DIR`, else found next to the `swiftc` on `PATH`.
let libFuzzerDirectory: String = {
    if let directory = Context.environment["LIBFUZZER_DIR"] { return directory }
    for entry in (Context.environment["PATH"] ?? "").split(separator: ":") {
        let swiftc = URL(fileURLWithPath: String(entry)).appendingPathComponent("swiftc")
        guard FileManager.default.fileExists(atPath: swiftc.path) else { continue }
        let bin = swiftc.resolvingSymlinksInPath().deletingLastPathComponent()
        return bin.deletingLastPathComponent().appendingPathComponent("lib/swift/clang/lib/linux").path
    }
    return "/usr/lib/swift/clang/lib/linux"
}()

#if arch(arm64)
let libFuzzerLibrary = "clang_rt.fuzzer_no_main-aarch64"
#else
let libFuzzerLibrary = "clang_rt.fuzzer_no_main-x86_64"
#endif

func fuzzer(_ name: String, also more: [Target.Dependency] = []) -> Target {
    .executableTarget(
        name: name,
        dependencies: [stateStore, "FuzzSupport"] + more,
        linkerSettings: [.unsafeFlags(["-L", libFuzzerDirectory, "-l" + libFuzzerLibrary, "-lstdc++"])]
    )
}

let package = Package(
    name: "StateStoreFuzz",
    dependencies: [
        .package(name: "StateStore", path: "..")
    ],
    targets: [
        .target(name: "CLibFuzzer"),
        // Running libFuzzer, input helpers and the invariant check shared by every target.
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"]),
        fuzzer("fuzz-meminfo"),
        fuzzer("fuzz-psi"),
        fuzzer("fuzz-mountinfo"),
        fuzzer("fuzz-cgroup"),
        // The library's export document decoder (`StateExport`), which `statectl import` calls.
        fuzzer("fuzz-import"),
        // The hierarchy archive's direct reader (`ArchiveReader`) against `JSONDecoder`.
        fuzzer("fuzz-archive"),
        // The JSON parser, its copier and its writer (`JSONParser`, `JSON`).
        fuzzer("fuzz-json"),
        // `StateStore.importStates` into a database file.
        fuzzer("fuzz-import-store"),
        // The key-file reader behind statectl's --key-file and --credential (`StateKey`); the
        // only target that builds swift-crypto.
        fuzzer("fuzz-keyfile", also: [stateStoreCrypto]),
    ],
    swiftLanguageModes: [.v6]
)
