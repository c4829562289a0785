/// How a presented controller covers the screen, as UIKit's `UIModalPresentationStyle`.
///
/// Set it on the controller to present, before ``ViewController/present(_:animated:completion:)``.
///
/// | Style | Presented view | Presenter |
/// |---|---|---|
/// | ``fullScreen`` (the default) | the window's bounds | disappears: `viewWillDisappear`/`viewDidDisappear` on present, `viewWillAppear`/`viewDidAppear` on dismiss |
/// | ``pageSheet``, ``formSheet`` | a sheet (see ``frame(in:)``) | stays on screen: no callbacks |
/// | ``overFullScreen`` | the window's bounds, over the presenter | stays on screen: no callbacks |
/// | ``overCurrentContext`` | the bounds of the controller that defines the context | that controller presents, stays on screen: no callbacks |
///
/// **When a presenter's state is saved.** The restoration layer saves a controller's state
/// after its `viewWillDisappear`. A full-screen presenter disappears, so presenting saves
/// it. A presenter under a sheet, an over-full-screen or an over-current-context
/// presentation does not disappear: it
/// is saved like any controller on screen, at the flush points (``Application/terminate()``,
/// a critical memory warning, SIGTERM/SIGINT when handled) and when it later disappears.
/// The presented controller is saved when it is dismissed, whatever its style. Relaunching
/// rebuilds the presentation with the style its controller sets when it is made (for
/// instance in its `init`), so a restored sheet is a sheet again, over a visible presenter.
///
/// Differences from UIKit: there is no `.automatic` (the default stays full screen),
/// `.currentContext`, `.popover` or `.custom`; sheet geometry is fixed (no detents);
/// rotation questions are asked of the topmost presented controller of the window's
/// root; a controller presented over a current context cannot present in turn.
public enum ModalPresentationStyle: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Covers the window; the presenter disappears.
    case fullScreen
    /// A sheet: in a compact-width window, the window's width and its height less
    /// ``sheetTopInset``; in a regular-width one, at most 704 points wide, centred. The
    /// presenter stays on screen and gets no callbacks.
    case pageSheet
    /// A smaller sheet: as ``pageSheet`` in a compact-width window; in a regular-width one,
    /// at most 540 × 620 points, centred. The presenter stays on screen and gets no callbacks.
    case formSheet
    /// Covers the window over the presenter, which stays on screen and gets no callbacks.
    case overFullScreen
    /// Covers the view of the controller that defines the presentation context (see
    /// ``ViewController/definesPresentationContext``), which becomes the presenter, stays on
    /// screen and gets no callbacks; the presented controller then appears and disappears
    /// with it (a tab switch hides both). With no such controller, as ``overFullScreen``.
    case overCurrentContext

    /// The gap between the top of the window and a sheet in a compact-width window.
    public static let sheetTopInset = 10.0

    /// Whether the presenter stays on screen under a controller presented this way.
    public var keepsPresenterVisible: Bool { self != .fullScreen }

    /// Whether the user can dismiss a controller presented this way by swiping it down.
    public var isSheet: Bool { self == .pageSheet || self == .formSheet }

    /// The frame of a presented controller's view in a window of `bounds`.
    public func frame(in bounds: Rect) -> Rect {
        let size = bounds.size
        let regular = TraitCollection(windowSize: size).horizontalSizeClass == .regular
        switch self {
        case .fullScreen, .overFullScreen, .overCurrentContext:
            return bounds
        case .pageSheet, .formSheet:
            let inset = min(Self.sheetTopInset, size.height)
            guard regular else {
                return Rect(x: 0, y: inset, width: size.width, height: size.height - inset)
            }
            let width = min(size.width, self == .formSheet ? 540 : 704)
            let height = self == .formSheet ? min(size.height - inset, 620) : size.height - inset
            let y = self == .formSheet ? ((size.height - height) / 2).rounded(.down) : inset
            return Rect(x: ((size.width - width) / 2).rounded(.down), y: y, width: width, height: height)
        }
    }

    public var description: String { rawValue }
}
