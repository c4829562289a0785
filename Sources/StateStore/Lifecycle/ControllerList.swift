/// Visiting a list of controllers without reference counting each one.
///
/// Every controller has weak references to it (its view's, the application's registry), so
/// the runtime keeps its counts in a side table, and each retain and release of it takes the
/// slow path: about a hundred instructions for the pair, and at a large hierarchy's size a cache
/// miss on the side table. The engine's walks over a container's children (appearance
/// forwarding, layout, adding children off screen) and the restoration coordinator's (an archive
/// capture, a check of a parent's children) paid that for every controller they met.
extension Array where Element == ViewController {
    /// Calls `body` with each controller in order, without retaining it, until `body` returns
    /// `false`; returns whether every call returned `true`.
    ///
    /// The list is consumed: the call owns its own copy, which holds each of its controllers
    /// whatever `body` does (a change to a parent's `children`, even made by a
    /// `restorationIdentifier` getter, copies the parent's list instead of touching this one).
    /// So no controller can go away while `body` looks at it, even when the caller passes a
    /// stored property.
    @inline(__always)
    consuming func allUnretained(_ body: (ViewController) -> Bool) -> Bool {
        withUnsafeBufferPointer { buffer in
            for index in buffer.indices {
                let keepGoing = Unmanaged.passUnretained(buffer[index])._withUnsafeGuaranteedRef(body)
                if !keepGoing { return false }
            }
            return true
        }
    }
}
