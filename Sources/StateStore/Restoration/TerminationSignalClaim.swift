/// Who handles SIGTERM and SIGINT for the process's application.
public enum TerminationSignalOwner: Sendable, Hashable, CustomStringConvertible {
    /// ``Application/installTerminationHandlers(signals:)``: the library's own handlers.
    case terminationHandlers
    /// A `ServiceGroup` whose graceful shutdown flushes the application
    /// (`ApplicationStateService` in the `StateStoreServiceLifecycle` product).
    case serviceGroup

    public var description: String {
        switch self {
        case .terminationHandlers: "installTerminationHandlers()"
        case .serviceGroup: "a ServiceGroup (ApplicationStateService)"
        }
    }
}

/// The second claim on SIGTERM and SIGINT: one owner handles them, or which one flushes, and
/// when the process exits, is a race.
public struct TerminationSignalsClaimedError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Who holds the signals.
    public let owner: TerminationSignalOwner
    /// Who asked for them and was refused.
    public let claimant: TerminationSignalOwner

    public var description: String {
        "SIGTERM and SIGINT are already handled by \(owner), so \(claimant) was refused: two handlers would race to "
            + "flush and exit. Keep one: in a ServiceGroup, let the group own the signals (its gracefulShutdownSignals) "
            + "and do not call installTerminationHandlers(); without a ServiceGroup, call installTerminationHandlers() "
            + "and do not run ApplicationStateService."
    }
}

/// The process-wide record of who handles SIGTERM and SIGINT (see ``TerminationSignalOwner``).
///
/// ``Application/installTerminationHandlers(signals:)`` and `ApplicationStateService` claim the
/// signals here before they take them; the second, different claimant is refused with a
/// ``TerminationSignalsClaimedError`` instead of racing the first. Claims are counted: with two
/// services claiming for their groups, the signals stay the groups' until both have released them.
public enum TerminationSignalClaim {
    private static let current = Lock<(owner: TerminationSignalOwner, claims: Int)?>(nil)

    /// Who handles the signals now, if anyone claimed them.
    public static var owner: TerminationSignalOwner? { current.withLock { $0?.owner } }

    /// Claims the signals for `owner`. Claiming again for the same owner succeeds, and counts:
    /// each claim is released once.
    ///
    /// - Throws: ``TerminationSignalsClaimedError`` when another owner holds them.
    public static func claim(_ owner: TerminationSignalOwner) throws(TerminationSignalsClaimedError) {
        let holder: TerminationSignalOwner? = current.withLock { current in
            guard let held = current else {
                current = (owner, 1)
                return nil
            }
            if held.owner != owner { return held.owner }
            current = (owner, held.claims + 1)
            return nil
        }
        if let holder { throw TerminationSignalsClaimedError(owner: holder, claimant: owner) }
    }

    /// Releases one claim of `owner`; once none is left, the signals are free to claim.
    public static func release(_ owner: TerminationSignalOwner) {
        current.withLock { current in
            guard let held = current, held.owner == owner else { return }
            current = held.claims > 1 ? (owner, held.claims - 1) : nil
        }
    }
}
