public import Grove

/// Why a host refused an event or ended a run. Equality compares codes only.
public struct HostError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of error.
    public struct Code: RawRepresentable, Hashable, Sendable {
        /// The code as text, e.g. `"mailbox-full"`.
        public var rawValue: String
        /// A code; prefer the named ones.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The bounded mailbox is full; the machine keeps running.
        public static let mailboxFull = Code(rawValue: "mailbox-full")
        /// The machine reached a terminal state.
        public static let terminated = Code(rawValue: "terminated")
        /// The machine was stopped with `stop()`.
        public static let stopped = Code(rawValue: "stopped")
        /// An effect failed under the `.fail` policy and stopped the machine.
        public static let effectFailed = Code(rawValue: "effect-failed")
        /// The host was released while a caller was still waiting.
        public static let hostReleased = Code(rawValue: "host-released")
    }

    /// What kind of error this is; equality of errors is equality of codes.
    public var code: Code
    /// What happened and what to do about it.
    public var message: String
    /// The machine address, as given in `HostOptions.address`.
    public var address: String
    /// The id of the effect involved, if any.
    public var effectID: EffectID?
    /// The underlying error of an effect failure.
    public var underlying: (any Error)? { underlyingBox?.error }
    private let underlyingBox: ErrorBox?

    init(_ code: Code, address: String, message: String, effectID: EffectID? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.address = address
        self.message = message
        self.effectID = effectID
        self.underlyingBox = underlying.map(ErrorBox.init)
    }

    public static func == (lhs: HostError, rhs: HostError) -> Bool { lhs.code == rhs.code }

    public var description: String { "\(code.rawValue) at \(address): \(message)" }

    @usableFromInline
    static func mailboxFull(address: String, capacity: Int) -> HostError {
        HostError(.mailboxFull, address: address, message:
            "mailbox is full (\(capacity) events waiting); the event was not accepted. Retry later, "
            + "or raise HostOptions.mailboxCapacity if bursts are expected")
    }

    /// What a host's release answers the events it had queued with, and later sends.
    @usableFromInline
    static func released(address: String) -> HostError {
        HostError(.hostReleased, address: address, message:
            "the host was released before processing this event; keep a reference to it while it has work")
    }

    static func terminated(address: String) -> HostError {
        HostError(.terminated, address: address, message:
            "the machine reached a terminal state and accepts no more events; start a new instance")
    }

    static func stopped(address: String) -> HostError {
        HostError(.stopped, address: address, message:
            "the machine was stopped and accepts no more events; start a new instance")
    }

    static func effectFailed(address: String, id: EffectID, error: any Error) -> HostError {
        HostError(.effectFailed, address: address, message:
            "effect '\(id)' failed with \(error) and its policy is .fail, so the machine stopped; "
            + "pass onError: .map { ... } to turn such errors into events",
            effectID: id, underlying: error)
    }
}

private final class ErrorBox: Sendable {
    let error: any Error
    init(_ error: any Error) { self.error = error }
}
