/// A state (or any value a machine hands out) with secrets: fields that must not leave the
/// process that hosts the machine, such as a password being typed.
///
/// A Grove worker replies, publishes and shows ``redacted`` wherever the value leaves it (`state`
/// replies, `get`, `stop`, state-change publications, and the audit log, which also writes an
/// event whose type adopts it redacted); the machine itself keeps the real value, so `update`
/// and its effects see it. Keep secrets in the fewest fields, and redact every one:
///
/// ```swift
/// extension AuthFlow.State: Redacting {
///     public var redacted: Self {
///         var copy = self
///         if case .enteringCredentials(let email, _) = step {
///             copy.step = .enteringCredentials(email: email, password: Redaction.placeholder)
///         }
///         return copy
///     }
/// }
/// ```
public protocol Redacting {
    /// This value with every secret replaced by ``Redaction/placeholder`` (or left out). Must
    /// not fail, and should keep what is not secret, so that watchers still see the step.
    var redacted: Self { get }
}

/// What stands in for a redacted secret.
public enum Redaction {
    /// `"<redacted>"`.
    public static let placeholder = "<redacted>"
}
