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
    init(link: WorkerLink, token: UInt64, address: String) {
        self.init(link: link, correlation: token & ~Self.binaryBit, address: address, binary: token & Self.binaryBit != 0)
    }

    private static let binaryBit: UInt64 = 1 << 63

    /// The correlation a ``token`` carries (0 for no token).
    static func correlation(ofToken token: UInt64) -> UInt64 { token & ~binaryBit }

    /// Correlation and codec in one number, for ``HostOptions/replyHandler``; nil for a
    /// correlation that needs the top bit (the coordinator's ids never do).
    var token: UInt64? {
        correlation & Self.binaryBit == 0 ? correlation | (binary ? Self.binaryBit : 0) : nil
    }

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
        var error = error
        if error.address == nil, !address.isEmpty { error.address = address }
        link.send(.error, correlation: correlation, address: address, payload: error.payload)
    }
}
