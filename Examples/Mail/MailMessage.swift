/// A message in the mail app's mailbox.
public struct MailMessage: Sendable, Hashable {
    public var id: String
    public var from: String
    public var subject: String
    public var body: String

    /// A fixed mailbox, so every run of the app shows the same messages.
    public static let mailbox: [MailMessage] = (0..<24).map { index in
        let id = "m-\(1040 + index)"
        let from = ["ada@example.com", "grace@example.com", "linus@example.com"][index % 3]
        return MailMessage(
            id: id, from: from, subject: "Status report #\(index + 1)",
            body: String(repeating: "Paragraph \(index + 1): all systems nominal. ", count: 40)
        )
    }

    /// The message with identifier `id`, if the mailbox has one.
    public static func find(_ id: String?) -> MailMessage? { mailbox.first { $0.id == id } }
}
