import GroveWire

/// One message as ``CoordinatorCore`` reads it, whether it came on its own (three frames) or as
/// an envelope of a batch: the header at once, the address and payload only when a rule needs
/// them, read in place. Nothing is copied to make one; the core's rules are written once against
/// it, so a lone message and a batched one cannot take different roads.
struct MessageView {
    private enum Source {
        /// A message's own address and payload frames.
        case frames(address: [UInt8], payload: [UInt8])
        /// An envelope of the batch payload `batch`.
        case envelope(Envelope, batch: [UInt8])
        /// A message already parsed (tests, the general path).
        case message(WireMessage)
    }

    let header: Header
    /// The payload's size in bytes.
    let payloadCount: Int
    private let source: Source

    var kind: MessageKind { header.kind }
    var correlation: UInt64 { header.correlation }

    /// A message sent on its own: `header` parsed from its first frame.
    init(_ header: Header, address: [UInt8], payload: [UInt8]) {
        self.header = header
        payloadCount = payload.count
        source = .frames(address: address, payload: payload)
    }

    /// An envelope of a batch.
    init(_ envelope: Envelope, in batch: [UInt8]) {
        header = Header(envelope.kind, flags: envelope.flags, correlation: envelope.correlation)
        payloadCount = envelope.payload.count
        source = .envelope(envelope, batch: batch)
    }

    /// A parsed message.
    init(_ message: WireMessage) {
        header = message.header
        payloadCount = message.payload.count
        source = .message(message)
    }

    /// The address as text.
    /// - Throws: ``WireError`` `malformed-frame` when it is not UTF-8 or too long.
    func address() throws(WireError) -> String {
        switch source {
        case .frames(let address, _): try WireMessage.address(address, correlation: header.correlation)
        case .envelope(let envelope, let batch): try envelope.addressText(in: batch)
        case .message(let message): message.address
        }
    }

    /// Appends the message's bytes to `batch` under `correlation`, as they are.
    func append(to batch: inout BatchBuilder, correlation: UInt64) {
        switch source {
        case .frames(let address, let payload):
            batch.append(kind: header.kind, flags: header.flags, correlation: correlation, address: address, payload: payload)
        case .envelope(let envelope, let source):
            batch.append(envelope, from: source, correlation: correlation)
        case .message(let message):
            batch.append(kind: header.kind, flags: header.flags, correlation: correlation, address: message.address.utf8,
                         payload: message.payload)
        }
    }

    /// Calls `body` with the address's and the payload's bytes, in place.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> R) -> R {
        switch source {
        case .frames(let address, let payload):
            return address.withUnsafeBytes { address in payload.withUnsafeBytes { body(address, $0) } }
        case .envelope(let envelope, let batch):
            precondition(envelope.address.lowerBound >= 0 && envelope.address.upperBound <= batch.count
                         && envelope.payload.lowerBound >= 0 && envelope.payload.upperBound <= batch.count,
                         "the envelope's ranges are outside the batch it is read from")
            return batch.withUnsafeBytes { source in
                body(UnsafeRawBufferPointer(rebasing: source[envelope.address]), UnsafeRawBufferPointer(rebasing: source[envelope.payload]))
            }
        case .message(let message):
            return Array(message.address.utf8).withUnsafeBytes { address in message.payload.withUnsafeBytes { body(address, $0) } }
        }
    }

    /// The whole message, for rules that read its payload (control messages, route errors).
    /// - Throws: ``WireError`` `malformed-frame` when the address is not UTF-8 or too long.
    func message() throws(WireError) -> WireMessage {
        switch source {
        case .frames(let address, let payload):
            WireMessage(header, address: try WireMessage.address(address, correlation: header.correlation), payload: payload)
        case .envelope(let envelope, let batch): try envelope.message(in: batch)
        case .message(let message): message
        }
    }
}

/// What the coordinator does with one client request; decided by
/// ``CoordinatorCore/decide(client:_:)``, with no allocation on the forwarding path.
enum ClientDecision: Equatable {
    /// Forward the request's bytes to worker number `worker`, under correlation `id`.
    case forward(worker: Int, id: UInt64)
    /// Answer it (a listing, a refusal) with these actions.
    case act([CoordinatorAction])
}

/// What the coordinator does with one message from a registered worker; decided by
/// ``CoordinatorCore/decide(worker:_:)``.
enum WorkerDecision: Equatable {
    /// A reply to a client's request: pass its bytes on to `client` under `correlation`.
    case reply(client: [UInt8], correlation: UInt64)
    /// These actions (publications, io call bookkeeping, refusals); none for a heartbeat or a
    /// reply nobody waits for any more.
    case act([CoordinatorAction])
}
