/// Where a ``ViewController`` is in its appearance cycle.
///
/// The legal moves are the ones UIKit makes:
///
/// | Callback | From | To |
/// |---|---|---|
/// | `viewWillAppear` | `initialized`, `disappeared`, `disappearing` (a cancelled disappearance) | `appearing` |
/// | `viewDidAppear` | `appearing` | `appeared` |
/// | `viewWillDisappear` | `appeared`, `appearing` (a cancelled appearance) | `disappearing` |
/// | `viewDidDisappear` | `disappearing` | `disappeared` |
///
/// Anything else is reported as a ``LifecycleViolation`` and not delivered.
public enum LifecycleState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Created; has never appeared.
    case initialized
    /// `viewWillAppear` was sent; `viewDidAppear` has not been yet.
    case appearing
    /// On screen.
    case appeared
    /// `viewWillDisappear` was sent; `viewDidDisappear` has not been yet.
    case disappearing
    /// Was on screen, is not any more.
    case disappeared

    /// `true` while appearing or appeared.
    public var isVisibleOrAppearing: Bool { self == .appearing || self == .appeared }

    public var description: String { rawValue }
}
