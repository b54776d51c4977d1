/// An error thrown by a machine's work, handed to ``Machine/failureEvent(_:)`` so the machine
/// can turn it into one of its events.
public struct EffectFailure: Sendable {
    /// The id of the work that threw (a generated one when the effect had none).
    public let id: EffectID
    /// What the work threw. Typed errors keep their type: `failure.error as? NetworkError`.
    public let error: any Error

    public init(id: EffectID, error: any Error) {
        self.id = id
        self.error = error
    }

    /// The error's description, for a machine whose events carry text.
    public var message: String { String(describing: error) }
}
