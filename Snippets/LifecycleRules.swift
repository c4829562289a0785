// The callbacks of a push, recorded as they are sent: B's appearance interleaves with A's
// disappearance in UIKit's order.

import StateStore

let application = Application()
let window = Window(size: Size(width: 390, height: 844), application: application)
let a = ViewController()
a.restorationIdentifier = "A"
let navigation = NavigationController(rootViewController: a)
window.rootViewController = navigation
window.makeKeyAndVisible()

application.trace = LifecycleTrace(recording: LifecycleCallback.appearance)
let b = ViewController()
b.restorationIdentifier = "B"
navigation.pushViewController(b, animated: false)
print(application.trace!.lines.joined(separator: "\n"))
// A: viewWillDisappear(animated: false)
// B: viewWillAppear(animated: false)
// A: viewDidDisappear(animated: false)
// B: viewDidAppear(animated: false)
