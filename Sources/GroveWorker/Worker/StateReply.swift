public import GroveRuntime
public import GroveWire

/// Where the sender of one event waits: a `state` reply with the state the event committed (in
/// the event's codec), or an `error` reply saying why it did not run.
@usableFromInline
struct StateReply: Sendable {
    let link: WorkerLink
    let correlation: UInt64
    let address: String
    /// Whether the event came in GroveWire's binary codec (the reply then does too).
    let binary: Bool

    init(link: WorkerLink, correlation: UInt64, address: String, binary: Bool) {
        self.link = link
        self.correlation = correlation
        self.address = address
        self.binary = binary
    }

    /// The reply a ``token`` stands for.
    @usableFromInline
    init(link: WorkerLink, token: ReplyToken, address: String) {
        self.init(link: link, correlation: token.correlation, address: address, binary: token.binary)
    }

    /// Correlation and codec in one number, for ``HostOptions/replyHandler``; nil for a
    /// correlation that needs the top bit (the coordinator's ids never do).
    var token: ReplyToken? { ReplyToken(correlation: correlation, binary: binary) }

    /// Answers with a state of type `type`, written by `binary` straight into the batch of
    /// replies, or encoded by `json`: specialized closures from a machine type's
    /// ``HostedPath``, so no generic code runs per reply.
    /// - Parameter unhandled: The machine's `update` returned `.unhandled` for the event: the
    ///   reply carries the `unhandled` flag (the state is the one it was already in).
    @usableFromInline
    func send(_ type: Any.Type, unhandled: Bool = false, binary write: (inout [UInt8]) throws(BinaryCodingError) -> Void,
              json: () throws -> [UInt8]) {
        let flags: Header.Flags = unhandled ? [.unhandled] : []
        do {
            if binary {
                try link.send(.state, flags: flags.union(.binary), correlation: correlation, address: address, writingPayload: write)
            } else {
                link.send(.state, flags: flags, correlation: correlation, address: address, payload: try json())
            }
        } catch {
            fail(.unencodableState(error, type: type, binary: binary, outcome: "the event ran and its state was committed",
                                   address: address))
        }
    }

    /// Answers with why a host refused the event or did not run it.
    @usableFromInline
    func fail(refusal error: HostError) {
        fail(WireError(refusal: error, address: address))
    }

    /// Answers with `error`, naming the machine's address when the error does not.
    func fail(_ error: WireError) {
        link.send(WireMessage.error(error, correlation: correlation, address: address))
    }
}

/// A waiting sender's reply as the one number a host keeps with the event
/// (``HostOptions/replyHandler``, which knows nothing of codecs): the request's correlation in
/// the low 63 bits, the event's codec in the top bit (set: GroveWire's binary codec). The
/// coordinator's ids never use the top bit (``CorrelationEpoch``), so every request it sends
/// has one; a correlation that does cannot share the number with its codec.
@usableFromInline
struct ReplyToken: Equatable, Sendable {
    /// What the host keeps.
    @usableFromInline
    let raw: UInt64

    @usableFromInline
    static let binaryBit: UInt64 = 1 << 63

    /// Nil when `correlation` needs the top bit.
    init?(correlation: UInt64, binary: Bool) {
        guard correlation & Self.binaryBit == 0 else { return nil }
        raw = correlation | (binary ? Self.binaryBit : 0)
    }

    /// The token a host hands back.
    @usableFromInline
    init(raw: UInt64) { self.raw = raw }

    @usableFromInline
    var correlation: UInt64 { raw & ~Self.binaryBit }
    @usableFromInline
    var binary: Bool { raw & Self.binaryBit != 0 }
}
