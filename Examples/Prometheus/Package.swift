// swift-tools-version:6.1
// StateStore's metrics scraped in the Prometheus text format: a package of its own, so the
// library never depends on swift-prometheus. `swift run` in this folder prints the scrape.
import PackageDescription

let package = Package(
    name: "PrometheusExample",
    dependencies: [
        .package(name: "StateStore", path: "../.."),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
    ],
    targets: [
        .executableTarget(
            name: "PrometheusExample",
            dependencies: [
                .product(name: "StateStore", package: "StateStore"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
