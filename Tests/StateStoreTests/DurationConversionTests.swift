import Foundation
import Testing

@testable import StateStore

/// Durations become numbers in one place, saturating; the store's durations are checked.
@Suite struct DurationConversionTests {
    let folder = TemporaryFolder()

    @Test func wholeUnitsRoundTowardZeroAndSaturate() {
        #expect(Duration.milliseconds(1500).saturatingMilliseconds == 1500)
        #expect(Duration.nanoseconds(1999).saturatingMicroseconds == 1)
        #expect(Duration.nanoseconds(-1999).saturatingMicroseconds == -1)
        #expect(Duration.seconds(3).saturatingNanoseconds == 3_000_000_000)
        #expect(Duration.seconds(Int64.max).saturatingNanoseconds == .max)
        #expect(Duration.seconds(Int64.max).saturatingMilliseconds == .max)
        #expect(Duration.seconds(Int64.min).saturatingMicroseconds == .min)
        #expect(Duration.seconds(Int64.max / 1000).saturatingMilliseconds == Int64.max / 1000 * 1000)
        #expect(Duration.milliseconds(250).seconds == 0.25)
        #expect(Duration.zero.saturatingNanoseconds == 0)
    }

    @Test(arguments: [
        (StateStore.Options(busyTimeout: .milliseconds(-1)), "busyTimeout"),
        (StateStore.Options(busyTimeout: .seconds(Int64.max)), "busyTimeout"),
        (StateStore.Options(busyTimeout: .milliseconds(Int64(Int32.max) + 1)), "busyTimeout"),
        (StateStore.Options(retention: .nanoseconds(-1)), "retention"),
        (StateStore.Options(retention: .seconds(-86_400)), "retention"),
        (StateStore.Options(backgroundCheck: .quick(after: .seconds(-1))), "backgroundCheck"),
    ])
    func aDurationOutOfRangeIsRefusedBeforeAnythingIsOpened(options: StateStore.Options, name: String) throws {
        let path = folder.file("state.sqlite")
        #expect {
            try StateStore(path: path, options: options)
        } throws: { error in
            guard case StateStoreError.invalidOption(let refused, let reason) = error else { return false }
            return refused == name && !reason.isEmpty && "\(error)".contains("StateStore.Options.\(name)")
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func theLongestBusyTimeoutSQLiteTakesIsAccepted() throws {
        let store = try StateStore(
            path: folder.file("state.sqlite"), options: .init(busyTimeout: .milliseconds(Int64(Int32.max))))
        try store.save("kept", for: "a")
        #expect(try store.restore(String.self, for: "a") == "kept")
    }

    @Test(arguments: [
        (MemoryPressureMonitor.Configuration(minimumLevelDuration: .seconds(-1)), "minimumLevelDuration"),
        (MemoryPressureMonitor.Configuration(repeatInterval: .zero), "repeatInterval"),
        (MemoryPressureMonitor.Configuration(minimumPollingInterval: .microseconds(999)), "minimumPollingInterval"),
        (MemoryPressureMonitor.Configuration(minimumPollingInterval: .seconds(-1)), "minimumPollingInterval"),
        (
            MemoryPressureMonitor.Configuration(
                minimumPollingInterval: .seconds(2), maximumPollingInterval: .seconds(1)),
            "maximumPollingInterval"
        ),
    ])
    func aMonitorDurationOutOfRangeIsRefusedAtCreation(configuration: MemoryPressureMonitor.Configuration, name: String)
    {
        #expect {
            try MemoryPressureMonitor(configuration: configuration)
        } throws: { error in
            guard case MemoryError.invalidConfiguration(let refused, let reason) = error else { return false }
            return refused == name && !reason.isEmpty
                && "\(error)".hasPrefix("MemoryPressureMonitor.Configuration.\(name) is ")
        }
    }

    @Test func theMonitorsDefaultsAndItsEdgesAreAccepted() throws {
        try MemoryPressureMonitor.Configuration().validate()
        try MemoryPressureMonitor.Configuration(
            minimumLevelDuration: .zero, repeatInterval: nil, minimumPollingInterval: .milliseconds(1),
            maximumPollingInterval: .milliseconds(1)
        ).validate()
    }
}
