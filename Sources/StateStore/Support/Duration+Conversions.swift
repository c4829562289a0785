/// The one place a `Duration` becomes a number: whole units rounded toward zero and saturated
/// at `Int64`'s bounds (a delay of `.seconds(.max)` is for ever, never negative), or seconds as
/// a `Double`. Used by the library, `statectl`, the soak and the package's test programs.
extension Duration {
    /// Whole `1 / unitsPerSecond` of a second (1,000: milliseconds), toward zero, saturated.
    package func saturatingUnits(perSecond unitsPerSecond: Int64) -> Int64 {
        precondition(unitsPerSecond > 0 && unitsPerSecond <= 1_000_000_000_000_000_000)
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: unitsPerSecond)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, overflowAgain) = scaled.addingReportingOverflow(
            attoseconds / (1_000_000_000_000_000_000 / unitsPerSecond))
        if overflowAgain { return attoseconds < 0 ? .min : .max }
        return total
    }

    /// Whole nanoseconds, toward zero, saturated at `Int64`'s bounds.
    package var saturatingNanoseconds: Int64 { saturatingUnits(perSecond: 1_000_000_000) }
    /// Whole microseconds, toward zero, saturated at `Int64`'s bounds.
    package var saturatingMicroseconds: Int64 { saturatingUnits(perSecond: 1_000_000) }
    /// Whole milliseconds, toward zero, saturated at `Int64`'s bounds.
    package var saturatingMilliseconds: Int64 { saturatingUnits(perSecond: 1_000) }
    /// The duration in seconds, as a `Double`.
    package var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
