// README: begin
import StateStore

/// A text field, as far as this example needs one.
public final class TextView: View {
    public var text = ""
}

/// A draft reply, presented modally: it survives disappearing, relaunches and crashes.
public final class ComposeController: ViewController, StateRestoring {
    public struct Draft: Codable, Sendable, Hashable {
        public var to = "", subject = "", body = ""
        /// Where the insertion point is, in characters from the start; absent in older rows.
        public var cursor: Int?
    }
    public var restorableState = Draft()  // saved on disappear, restored on appear

    public let editor = TextView()
    /// The rendered draft; an entry costs its size in bytes.
    public let preview = RecreatableCache<String, String>(name: "compose.preview", registry: nil) { $0.utf8.count }

    /// Refuses to turn upside down, to show that a rotation can be refused.
    public override var supportedInterfaceOrientations: InterfaceOrientationMask { .allButUpsideDown }

    public override func viewDidLoad() {
        super.viewDidLoad()
        view.addSubview(editor)
        register(preview)  // purged on memory warnings (warning trims, critical empties)
    }

    public override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        editor.text = restorableState.body  // already restored when this runs
    }

    public override func viewWillDisappear(_ animated: Bool) {
        super.viewWillDisappear(animated)
        restorableState.body = editor.text  // commit edits; the save follows this override
    }
}
// README: end

extension ComposeController {
    /// Fills in the draft as the user would, through a text view's change notifications:
    /// the fields and the body go into the draft at once, and the body into the editor.
    /// (Text put into ``editor`` directly reaches the draft when the screen disappears.)
    public func type(to: String, subject: String, body: String) {
        restorableState.to = to
        restorableState.subject = subject
        restorableState.body = body
        editor.text = body
        preview.setValue(
            "To: \(to)\nSubject: \(subject)\n\n\(body)" + String(repeating: " ", count: 4096), forKey: "draft")
    }
}
