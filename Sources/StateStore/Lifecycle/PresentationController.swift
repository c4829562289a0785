/// Told about the user's attempts to dismiss a sheet, as UIKit's
/// `UIAdaptivePresentationControllerDelegate`.
///
/// These are sent only for the user's swipe down on a sheet
/// (``PresentationController/dismissInteractively()``), never for
/// ``ViewController/dismiss(animated:completion:)`` called by code, as in UIKit. Every
/// method has a default: allow, do nothing.
@MainActor
public protocol AdaptivePresentationControllerDelegate: AnyObject {
    /// Whether the sheet may be dismissed now; not asked when
    /// ``ViewController/isModalInPresentation`` already refuses.
    func presentationControllerShouldDismiss(_ presentationController: PresentationController) -> Bool
    /// The dismissal was refused (by ``ViewController/isModalInPresentation`` or
    /// ``presentationControllerShouldDismiss(_:)``): ask the user what to do with their edits.
    func presentationControllerDidAttemptToDismiss(_ presentationController: PresentationController)
    /// The sheet is about to be dismissed: before its `viewWillDisappear`.
    func presentationControllerWillDismiss(_ presentationController: PresentationController)
    /// The sheet was dismissed: after its `viewDidDisappear` and its presenter's
    /// callbacks, when its state is already queued for saving.
    func presentationControllerDidDismiss(_ presentationController: PresentationController)
}

extension AdaptivePresentationControllerDelegate {
    public func presentationControllerShouldDismiss(_ presentationController: PresentationController) -> Bool { true }
    public func presentationControllerDidAttemptToDismiss(_ presentationController: PresentationController) {}
    public func presentationControllerWillDismiss(_ presentationController: PresentationController) {}
    public func presentationControllerDidDismiss(_ presentationController: PresentationController) {}
}

/// The object that manages a controller's presentation, as UIKit's `UIPresentationController`:
/// where its ``delegate`` is set, and where the user's swipe down on a sheet comes in.
///
/// Every controller has one (``ViewController/presentationController``), made on first
/// access, so the delegate can be set before presenting.
@MainActor
public final class PresentationController {
    /// The controller this object presents.
    public private(set) weak var presentedViewController: ViewController?
    /// The controller that presented it, while it is presented.
    public var presentingViewController: ViewController? { presentedViewController?.presentingStorage }
    /// Told about the user's attempts to dismiss a sheet. Weak, as in UIKit.
    public weak var delegate: (any AdaptivePresentationControllerDelegate)?

    init(presentedViewController: ViewController) {
        self.presentedViewController = presentedViewController
    }

    /// The presented controller's style.
    public var presentationStyle: ModalPresentationStyle {
        presentedViewController?.modalPresentationStyle ?? .fullScreen
    }

    /// The user swiped the sheet down: dismisses it unless it refuses; returns whether it did.
    ///
    /// Only a controller presented as a sheet (``ModalPresentationStyle/isSheet``), on top of
    /// its window's presentations, can be swiped away; anything else returns `false` and
    /// sends nothing. When the presented controller, or a controller visible in it, has
    /// ``ViewController/isModalInPresentation`` set, or the delegate's
    /// ``AdaptivePresentationControllerDelegate/presentationControllerShouldDismiss(_:)``
    /// returns `false`, the delegate gets
    /// ``AdaptivePresentationControllerDelegate/presentationControllerDidAttemptToDismiss(_:)``
    /// and the sheet stays. Otherwise: `presentationControllerWillDismiss`, the dismissal
    /// (animated, with the callbacks of ``ViewController/dismiss(animated:completion:)``),
    /// then `presentationControllerDidDismiss`.
    @discardableResult
    public func dismissInteractively() -> Bool {
        guard let presented = presentedViewController, let presenter = presented.presentingStorage,
            presented.modalPresentationStyle.isSheet, presented.presentedStorage == nil,
            presented.lifecycleState == .appeared, presented.isInVisibleWindow, !TransitionQueue.isBusy
        else { return false }
        if presented.visibleTree.contains(where: \.isModalInPresentation)
            || delegate?.presentationControllerShouldDismiss(self) == false
        {
            delegate?.presentationControllerDidAttemptToDismiss(self)
            return false
        }
        delegate?.presentationControllerWillDismiss(self)
        presenter.dismiss(animated: true)
        delegate?.presentationControllerDidDismiss(self)
        return true
    }
}

extension ViewController {
    /// The object that manages this controller's presentation (its containment root's):
    /// set its ``PresentationController/delegate`` before presenting to hear about the
    /// user's swipes on a sheet.
    public var presentationController: PresentationController? {
        let root = containmentRoot
        if let existing = root.storedPresentationController { return existing }
        let made = PresentationController(presentedViewController: root)
        root.storedPresentationController = made
        return made
    }
}
