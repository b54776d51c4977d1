/// A state (or any value a machine hands out) with secrets: fields that must not leave the
/// process that hosts the machine, such as a password being typed.
///
/// A Grove worker replies, publishes and shows ``redacted`` wherever the value leaves it (`state`
/// replies, `get`, `stop`, state-change publications, snapshots, the audit log, which also
/// writes an event whose type adopts it redacted, and the dead letters it lists); the machine
/// itself keeps the real value, so `update` and its effects see it, and so does the worker's
/// store (mode 0600). Keep secrets in the fewest fields, and redact every one:
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
///
/// Grove's wrappers (``AwaitingStateMachine``'s state and steps, ``IOMachine``'s events, a
/// reducer registered as a value) adopt it too, redacting what they wrap when that adopts it.
public protocol Redacting {
    /// This value with every secret replaced by ``Redaction/placeholder`` (or left out). Must
    /// not fail, and should keep what is not secret, so that watchers still see the step.
    var redacted: Self { get }

    /// Whether values of this type may hold secrets at all. `true` unless a wrapper says what it
    /// wraps holds none (then its values leave as they are, at no cost).
    static var holdsSecrets: Bool { get }
}

extension Redacting {
    public static var holdsSecrets: Bool { true }
}

/// What stands in for a redacted secret, and the one way every layer redacts.
public enum Redaction {
    /// `"<redacted>"`.
    public static let placeholder = "<redacted>"

    /// `secret` as it may leave: ``placeholder``, or empty when it is empty, so a form can still
    /// show which fields are left to fill.
    /// - Parameter secret: A password, a token, a code.
    /// - Returns: `""` or ``placeholder``.
    public static func hiding(_ secret: String) -> String { secret.isEmpty ? "" : placeholder }

    /// Whether values of `type` may hold secrets: it adopts ``Redacting`` (and, for a wrapper,
    /// what it wraps does).
    /// - Parameter type: The type of the values.
    /// - Returns: `true` when ``redact(_:)`` may change its values.
    public static func applies<T>(to type: T.Type) -> Bool {
        (type as? any Redacting.Type)?.holdsSecrets ?? false
    }

    /// `value` as it may leave its process: its ``Redacting/redacted`` form when its type adopts
    /// ``Redacting``, else `value` itself.
    /// - Parameter value: A state, an event, or any value a machine hands out.
    /// - Returns: The value with its secrets replaced.
    public static func redact<T>(_ value: T) -> T {
        guard let secretive = value as? any Redacting, let redacted = secretive.redacted as? T else { return value }
        return redacted
    }
}
