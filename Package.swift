// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "StateStore",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StateStore", targets: ["StateStore"]),
        .executable(name: "statectl", targets: ["statectl"]),
        // Exported only for Benchmarks/, whose raw-SQLite peer (the floor) needs the C API.
        .library(name: "CSQLite", targets: ["CSQLite"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // Debian's libsqlite3-dev, found through pkg-config.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // malloc_trim, fstatfs and prctl, which Swift's Glibc module does not import; linked
        // directly, so they also work in a statically linked executable.
        .systemLibrary(name: "CLinux"),
        // Turns migrations/*.sql into Swift source at build time, so the top-level
        // folder stays the only copy of the schema and nothing is read at run time.
        .executableTarget(name: "embed-migrations"),
        .plugin(
            name: "EmbedMigrations",
            capability: .buildTool(),
            dependencies: ["embed-migrations"]
        ),
        .target(
            name: "StateStore",
            dependencies: [
                "CSQLite",
                "CLinux",
                .product(name: "Logging", package: "swift-log"),
            ],
            plugins: ["EmbedMigrations"]
        ),
        .executableTarget(
            name: "statectl",
            dependencies: [
                "StateStore",
                "CLinux",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // A small program the tests and `statectl soak` run as a separate process:
        // saving in a loop until killed, allocating ballast, relaunching an app.
        .executableTarget(
            name: "statestore-worker",
            dependencies: ["StateStore", "CLinux"]
        ),
        .testTarget(
            name: "StateStoreTests",
            dependencies: ["StateStore", "CSQLite"],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
