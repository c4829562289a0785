/// A rectangle in a window's view hierarchy, owned by a ``ViewController`` or by another view.
///
/// A view lays itself out lazily: changing the size of its ``frame`` (or calling
/// ``setNeedsLayout()``) marks it and schedules a pass on the main actor's next turn (unless
/// its superview's layout, which lays out the subviews next, is what marked it); that
/// pass, or an earlier ``layoutIfNeeded()``, runs the owning
/// controller's ``ViewController/viewWillLayoutSubviews()``, positions the views of its
/// visible child controllers, calls ``layoutSubviews()``, then
/// ``ViewController/viewDidLayoutSubviews()``, and finally lays out the subviews.
/// A new view starts marked, so its first layout always happens: that is when its
/// geometry is first known.
@MainActor
open class View {
    /// The view's position and size in its superview's coordinates (or the window's).
    ///
    /// A change of size marks the view as needing layout; moving it does not.
    public var frame: Rect {
        didSet {
            if frame.size != oldValue.size { setNeedsLayout() }
        }
    }

    /// The view's own coordinate space: the frame's size at the origin.
    public var bounds: Rect {
        get { Rect(origin: .zero, size: frame.size) }
        set { frame.size = newValue.size }
    }

    /// The views this view contains, back to front.
    ///
    /// Only ``addSubview(_:)`` and ``removeFromSuperview()`` change it, by an append or a
    /// removal that calls nothing out: the runtime's exclusivity check is left out.
    @exclusivity(unchecked) public private(set) var subviews: [View] = []

    /// The view that contains this one. Only ``addSubview(_:)`` and ``removeFromSuperview()``
    /// set it, by a plain assignment: the runtime's exclusivity check is left out.
    @exclusivity(unchecked) public private(set) weak var superview: View?

    /// Whether a layout pass is pending.
    @exclusivity(unchecked) public private(set) var needsLayout = true

    /// The controller whose ``ViewController/view`` this is (set by the controller as it
    /// attaches or replaces its view, by a plain assignment: no exclusivity check).
    @exclusivity(unchecked) weak var viewController: ViewController?

    /// Creates a view.
    public init(frame: Rect = .zero) {
        self.frame = frame
    }

    /// Adds `view` on top of the subviews, taking it from its current superview first.
    public func addSubview(_ view: View) {
        guard view !== self else { return }
        if view.superview === self { return }
        view.removeFromSuperview()
        subviews.append(view)
        view.superview = self
    }

    /// Detaches the view from its superview.
    public func removeFromSuperview() {
        guard let superview else { return }
        superview.subviews.removeIdentical(self)
        self.superview = nil
        // Marked and not yet laid out, it may have counted on its superview's layout, which
        // it now leaves: it asks for a pass of its own.
        if needsLayout && superview.isPositioningSubviews { LayoutScheduler.schedule(self) }
    }

    /// Marks the view as needing layout and schedules a layout pass on the main actor's
    /// next turn (UIKit's next turn of the run loop); ``layoutIfNeeded()`` lays out at once.
    /// Called while its superview lays itself out, it schedules nothing: that layout lays
    /// out its subviews next.
    ///
    /// The scheduled pass lays out the view's hierarchy only while its controller is in a
    /// visible window; a hidden view lays out when it next appears.
    public func setNeedsLayout() {
        needsLayout = true
        // A view its superview's layout marks (positioning a child's view, `layoutSubviews`)
        // is laid out by that same layout, which lays out the subviews next: no pass to ask for.
        if superview?.isPositioningSubviews == true { return }
        LayoutScheduler.schedule(self)
    }

    /// Whether this view's own layout is running, before it lays out its subviews.
    @exclusivity(unchecked) private var isPositioningSubviews = false

    /// Lays out the view now if it is marked, then its subviews.
    public func layoutIfNeeded() {
        if needsLayout {
            needsLayout = false
            let wasPositioning = isPositioningSubviews
            isPositioningSubviews = true
            if let controller = viewController {
                controller.prepareToAppearIfNeeded()
                controller.deliverLayout(.viewWillLayoutSubviews)
                controller.positionChildViews()
                layoutSubviews()
                controller.deliverLayout(.viewDidLayoutSubviews)
            } else {
                layoutSubviews()
            }
            isPositioningSubviews = wasPositioning
        }
        for subview in subviews {
            subview.layoutIfNeeded()
        }
    }

    /// Override to position subviews. The default does nothing.
    open func layoutSubviews() {}

    /// Marks this view and every view below it.
    func setNeedsLayoutRecursively() {
        setNeedsLayout()
        for subview in subviews { subview.setNeedsLayoutRecursively() }
    }
}

extension Array where Element: AnyObject {
    /// Removes `element` itself wherever it is. Nonisolated on purpose: the same closure written
    /// in main-actor code would be isolated, and its executor checked once per element.
    mutating func removeIdentical(_ element: Element) {
        removeAll { $0 === element }
    }
}
