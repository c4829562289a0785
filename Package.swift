// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "StateStore",
    products: [
        .library(name: "StateStore", targets: ["StateStore"]),
        // Services for swift-service-lifecycle's ServiceGroup; a product of its own, so an app
        // on the core never compiles swift-service-lifecycle or swift-async-algorithms.
        .library(name: "StateStoreServiceLifecycle", targets: ["StateStoreServiceLifecycle"]),
        // Sealed states (encryption at rest) with swift-crypto; a product of its own, so an app
        // that does not seal never compiles swift-crypto and its BoringSSL.
        .library(name: "StateStoreCrypto", targets: ["StateStoreCrypto"]),
        // What an app's own tests use: a store per test, relaunch after termination or kill -9.
        // A product of its own, so an app's shipping target on the core never compiles it.
        .library(name: "StateStoreTesting", targets: ["StateStoreTesting"]),
        // GTK 4 events onto Application, Window and the controllers; a product of its own, so an
        // app on the core never compiles or links GTK.
        .library(name: "StateStoreGTK", targets: ["StateStoreGTK"]),
        .executable(name: "statectl", targets: ["statectl"]),
        .executable(name: "mail", targets: ["mail"]),
    ],
    traits: [
        // Sealed states in statectl (--key-file, --credential, rekey), through StateStoreCrypto
        // and so swift-crypto's BoringSSL. On by default; `scripts/demo` builds statectl without
        // it (in a build folder of its own), so a newcomer's first build compiles no BoringSSL.
        .trait(name: "Sealing", description: "statectl opens, checks and rekeys sealed states (StateStoreCrypto)."),
        .default(enabledTraits: ["Sealing"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // AES-GCM, HKDF and HMAC for StateStoreCrypto: Apple's CryptoKit API over BoringSSL.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.0"..<"5.0.0"),
        // `swift package generate-documentation` for the DocC catalog; a plugin, linked into nothing.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Debian's libsqlite3-dev, found through pkg-config. Named after the package, not
        // plain "CSQLite": target names must be unique across a whole dependency graph, and
        // an app may well have a CSQLite of its own. Not a product: only StateStore uses it.
        .systemLibrary(
            name: "StateStoreSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // malloc_trim, fstatfs and prctl, which Swift's Glibc module does not import; linked
        // directly, so they also work in a statically linked executable.
        .systemLibrary(name: "StateStoreLinux"),  // named after the package, as StateStoreSQLite is
        // Debian's libgtk-4-dev (GTK 4.8), found through pkg-config, with static inline wrappers
        // for the GObject macros Swift does not import. Not a product: only StateStoreGTK uses it.
        // A build that reaches it prints `warning: prohibited flag(s): -pthread, …, -mfpmath=sse,
        // -msse, -msse2`: SwiftPM passes on only -I and -F of a .pc file's Cflags (-L, -l, -F,
        // -framework, -w of its Libs), drops the rest and says so, and has no setting to quiet it.
        // -pthread comes from gthread-2.0's flags and the private libraries of glib-2.0, harfbuzz
        // and graphene-1.0, the SSE flags from graphene-1.0's Cflags (for 32-bit x86); neither is
        // needed (x86_64 has SSE2 and uses it for floating point; glibc has pthreads in libc, and
        // GTK's libraries link it themselves), and nothing but a pkg-config name finds GTK's include folders
        // without unsafeFlags, which would keep other packages from depending on StateStoreGTK.
        // An app on the core product never reaches it and builds without the warning
        // (scripts/check-dependency); scripts/test fails only on warnings in the project's files.
        .systemLibrary(
            name: "StateStoreGTK4",
            pkgConfig: "gtk4",
            providers: [.apt(["libgtk-4-dev"])]
        ),
        // Turns migrations/*.sql into Swift source at build time, so the top-level
        // folder stays the only copy of the schema and nothing is read at run time.
        .executableTarget(name: "embed-migrations"),
        // A simulated power cut under SQLite (the unsynced writes kept, dropped or torn per
        // sector; unsynced folder entries undone), for the testing kit's power cut, the tests
        // and the power-cut harness in statestore-worker. Not a product of its own (the
        // testing kit's product carries it), and nothing in the library uses it.
        .target(name: "StateStoreCrashVFS", dependencies: ["StateStoreSQLite"]),
        .plugin(
            name: "EmbedMigrations",
            capability: .buildTool(),
            dependencies: ["embed-migrations"]
        ),
        .target(
            name: "StateStore",
            dependencies: [
                "StateStoreSQLite",
                "StateStoreLinux",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            plugins: ["EmbedMigrations"]
        ),
        .target(
            name: "StateStoreGTK",
            dependencies: ["StateStore", "StateStoreGTK4"]
        ),
        .target(
            name: "StateStoreServiceLifecycle",
            dependencies: [
                "StateStore",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "StateStoreCrypto",
            dependencies: [
                "StateStore",
                "StateStoreLinux",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The testing kit: StateStore and the crash VFS (no test framework), so Swift Testing
        // and XCTest tests both use it; it reaches the engine's package-level hooks (a simulated
        // process death), and cuts the power under a launch with the crash VFS.
        .target(
            name: "StateStoreTesting",
            dependencies: ["StateStore", "StateStoreCrashVFS"]
        ),
        // `statectl soak`'s machinery: the supervisor, the harness and its controllers, the
        // cgroup, the child processes, the summary and its invariants, the SVG report. Not a
        // product: statectl parses the options, calls it and prints what it returns.
        .target(
            name: "StateStoreSoak",
            dependencies: ["StateStore", "StateStoreLinux"]
        ),
        // The example app: a small mail app on StateStore's public API, which the README
        // excerpts, `statectl demo` runs and the relaunch tests start in a real process.
        // Not a product.
        .target(
            name: "MailExample",
            dependencies: ["StateStore"],
            path: "Examples/Mail"
        ),
        // The mail app at a terminal (`swift run mail`): raw mode, ANSI drawing, dispatchMain.
        .executableTarget(
            name: "mail",
            dependencies: ["StateStore", "MailExample"],
            path: "Examples/MailTerminal"
        ),
        // The mail app in a GTK 4 window (`swift run mail-gtk`): the inbox, the message pushed on a
        // GtkStack, the reply in a modal dialog, settings and a status bar; after a relaunch or
        // kill -9 it comes back as it was left, in a window of the size it had.
        .executableTarget(
            name: "mail-gtk",
            dependencies: ["StateStore", "StateStoreGTK", "MailExample"],
            path: "Examples/MailGTK"
        ),
        // The GTK adapter's test program: a stand-in for the low-memory-monitor service on a
        // private system bus, and a memory monitor fed GLib's warnings.
        .executableTarget(
            name: "statestore-gtk-worker",
            dependencies: ["StateStore", "StateStoreGTK"]
        ),
        .executableTarget(
            name: "statectl",
            dependencies: [
                "StateStore",
                "StateStoreSoak",
                .target(name: "StateStoreCrypto", condition: .when(traits: ["Sealing"])),
                "MailExample",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // A small program the tests and `statectl soak` run as a separate process:
        // saving in a loop until killed, allocating ballast, relaunching an app.
        .executableTarget(
            name: "statestore-worker",
            dependencies: [
                "StateStore", "StateStoreLinux", "StateStoreCrashVFS", "StateStoreSQLite", "StateStoreCrypto", "MailExample",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The mail app run by a ServiceGroup, for the tests: SIGTERM and SIGINT go to the group.
        .executableTarget(
            name: "statestore-service-worker",
            dependencies: [
                "StateStore", "StateStoreServiceLifecycle", "StateStoreCrashVFS", "MailExample",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "StateStoreTests",
            dependencies: [
                "StateStore", "StateStoreSQLite", "StateStoreCrashVFS", "MailExample", "StateStoreServiceLifecycle", "StateStoreCrypto",
                "StateStoreTesting",
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            // Snapshots/ is read and rewritten in the source tree, not from the bundle.
            exclude: ["Snapshots"],
            resources: [.copy("Fixtures")]
        ),
        // The example apps' own tests, written with the testing kit as an app's developer would
        // write them: a store per test, a relaunch after termination or kill -9, a memory warning.
        .testTarget(
            name: "MailExampleTests",
            dependencies: ["MailExample", "StateStore", "StateStoreTesting"],
            path: "Examples/MailTests"
        ),
        // The terminal app's, through `@testable import mail`: its screens as it draws them.
        .testTarget(
            name: "MailTerminalTests",
            dependencies: ["mail", "MailExample", "StateStore", "StateStoreTesting"],
            path: "Examples/MailTerminalTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
