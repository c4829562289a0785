// swift-tools-version:6.1
// The benchmarks live in their own package so the library's build and CI stay lean.
// Run them with `./compare` (table + targets) or `swift package benchmark`.
import PackageDescription

let package = Package(
    name: "StateStoreBenchmarks",
    dependencies: [
        .package(name: "StateStore", path: ".."),
        // package-benchmark (renamed ordo-one/benchmark). Only the malloc interposer: the
        // ARC runtime interposer (a default trait on Linux with Swift 6.3) is not needed
        // for wall-clock time and malloc counts.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // Debian's libsqlite3-dev for the raw-SQLite peer (the floor): the benchmarks' own
        // system-library target, since StateStore does not export its own.
        .systemLibrary(name: "BenchmarkSQLite", path: "Sources/BenchmarkSQLite", pkgConfig: "sqlite3"),
        // The peers (StateStore, raw SQLite, GRDB, a JSON file per controller, UserDefaults),
        // the sample state and the shared fixture databases, used by StoreBenchmarks and Probe.
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                .product(name: "StateStore", package: "StateStore"),
                .product(name: "StateStoreCrypto", package: "StateStore"),
                "BenchmarkSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Save/restore side by side: StateStore, raw SQLite (the floor), GRDB,
        // a JSON file per controller, and UserDefaults; plus scaling by rows and size.
        .executableTarget(
            name: "StoreBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/StoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Lifecycle, restoration and memory layers: push + pop with save/restore,
        // memory-warning dispatch, a monitor sample, cache get/set.
        .executableTarget(
            name: "LayerBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "StateStore", package: "StateStore"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/LayerBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Open and launch as the database grows: open cold/warm beside the raw floor, and a fresh
        // process (LaunchProbe) from its start to the first viewDidAppear of a restored hierarchy.
        .executableTarget(
            name: "LaunchBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                "BenchmarkSQLite",
                .product(name: "StateStore", package: "StateStore"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/LaunchBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The application LaunchBenchmarks launches: restores ten pages, says when the first appeared.
        .executableTarget(
            name: "LaunchProbe",
            dependencies: [.product(name: "StateStore", package: "StateStore")],
            path: "Tools/LaunchProbe"
        ),
        // The push + pop benchmarks outside the harness, for callgrind and perf (see its main.swift).
        .executableTarget(
            name: "PushPopProbe",
            dependencies: ["BenchmarkSupport", .product(name: "StateStore", package: "StateStore")],
            path: "Tools/PushPopProbe"
        ),
        // The same peers outside the harness, for perf/strace/valgrind (see its main.swift).
        .executableTarget(
            name: "Probe",
            dependencies: ["BenchmarkSupport"],
            path: "Tools/Probe"
        ),
    ],
    swiftLanguageModes: [.v6]
)
