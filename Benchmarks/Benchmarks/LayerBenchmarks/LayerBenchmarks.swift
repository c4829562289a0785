// EXTENSION POINT — scenarios that need the Lifecycle, Restoration and Memory layers.
//
// Not built yet: this folder is not a target until those layers exist on the branch
// this package is built from. To enable it, add to Benchmarks/Package.swift:
//
//     .executableTarget(
//         name: "LayerBenchmarks",
//         dependencies: [
//             .product(name: "StateStore", package: "StateStore"),
//             .product(name: "Benchmark", package: "benchmark"),
//         ],
//         path: "Benchmarks/LayerBenchmarks",
//         plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
//     ),
//
// and replace the sketches below. Keep the "<scenario>/<peer>" naming so
// `Benchmarks/compare` can pair them; peers that have no equivalent (UIKit is not on
// Linux) are simply absent, and the column shows "—".
//
// Scenarios the issue asks for:
//
// - "push pop 1KB/store": a NavigationController in a Window with a StateRestoring
//   root; each iteration pushes a controller (A.viewWillDisappear saves A's 1 KB
//   state, B.viewWillAppear restores B's) and pops it (the mirror). Peers: the same
//   cycle with the lifecycle observer replaced by the raw-SQLite and JSON-file savers
//   from StoreBenchmarks/Peers.swift, so the lifecycle's own cost shows as the gap.
// - "memory warning 1k/store", "memory warning 10k/store": Application
//   .didReceiveMemoryWarning(level: .warning) with 1,000 and 10,000 live controllers
//   (visible ones flush their state), measured per dispatch.
// - "monitor sample/store": MemoryPressureMonitor(configuration: .init(root: fixture))
//   .sample() on a copy of ../shared/fixtures (read + parse meminfo, PSI, cgroup).
// - "cache get/set/store": RecreatableCache get and set at steady state, beside a
//   Mutex-protected Dictionary (the floor) and NSCache.
//
// import Benchmark
// import StateStore
//
// let benchmarks: @Sendable () -> Void = {
//     Benchmark("push pop 1KB/store", configuration: .init(metrics: [.wallClock, .throughput])) { benchmark in
//         // MainActor.assumeIsolated { ... navigation.pushViewController(next, animated: false) ... }
//     }
// }
