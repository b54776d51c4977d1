@_spi(GroveInternal) import GroveWire

/// One message as ``CoordinatorCore`` reads it, whether it came on its own (three frames) or as
/// an envelope of a batch: its header, and its address and payload as the bytes they are where
/// they arrived. Nothing is copied or retained to make one (the core's rules run once per
/// message on the coordinator's hot path); it is valid only inside the `with…` call or the
/// buffer scope that made it. The rules are written once against it, so a lone message and a
/// batched one cannot take different roads.
struct MessageView {
    let header: Header
    let addressBytes: UnsafeRawBufferPointer
    /// The payload proper, without a trace context's prefix (``traceBytes``).
    let payloadBytes: UnsafeRawBufferPointer
    /// The `traceparent` the message carries (``TraceParent``), as it came; `nil` without
    /// ``Header/Flags/traced``. Split off by a length byte: no copy, nothing parsed.
    let traceBytes: UnsafeRawBufferPointer?
    /// Set when the header says the payload starts with a trace context but its length byte
    /// runs past the payload; the core refuses the message (`malformed-frame`). A flag, its
    /// error made only when asked: a view is made and passed along for every message, and an
    /// optional error stored in it would be copied (and its strings retained) each time.
    private let traceMalformed: Bool

    /// Why the trace context's prefix is malformed (``traceMalformed``), or nil.
    var traceProblem: WireError? {
        guard traceMalformed else { return nil }
        do {
            _ = try TraceParent.split(payloadBytes, correlation: header.correlation)
            return nil
        } catch {
            return error
        }
    }

    /// Where it came from, for messages about a bad address.
    private let inBatch: Bool

    var kind: MessageKind { header.kind }
    var correlation: UInt64 { header.correlation }
    var payloadCount: Int { payloadBytes.count }

    /// An envelope of the batch payload whose bytes are `batch`.
    init(_ envelope: Envelope, in batch: UnsafeRawBufferPointer) {
        precondition(envelope.address.lowerBound >= 0 && envelope.address.upperBound <= batch.count
                     && envelope.payload.lowerBound >= 0 && envelope.payload.upperBound <= batch.count,
                     "the envelope's ranges are outside the batch it is read from")
        self.init(Header(envelope.kind, flags: envelope.flags, correlation: envelope.correlation),
                  address: UnsafeRawBufferPointer(rebasing: batch[envelope.address]),
                  payload: UnsafeRawBufferPointer(rebasing: batch[envelope.payload]), inBatch: true)
    }

    private init(_ header: Header, address: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer, inBatch: Bool = false) {
        addressBytes = address
        self.inBatch = inBatch
        // One bit tested per message when nothing is traced.
        guard header.flags.contains(.traced) else {
            self.header = header
            payloadBytes = payload
            traceBytes = nil
            traceMalformed = false
            return
        }
        var untraced = header
        untraced.flags.remove(.traced)
        self.header = untraced
        do {
            let (trace, body) = try TraceParent.split(payload, correlation: header.correlation)
            traceBytes = trace
            payloadBytes = body
            traceMalformed = false
        } catch {
            traceBytes = nil
            payloadBytes = payload
            traceMalformed = true
        }
    }

    /// Calls `body` with a view of a message sent on its own: `header` parsed from its first frame.
    static func with<R>(_ header: Header, address: [UInt8], payload: [UInt8], _ body: (MessageView) -> R) -> R {
        address.withUnsafeBytes { address in
            payload.withUnsafeBytes { payload in body(MessageView(header, address: address, payload: payload)) }
        }
    }

    /// Calls `body` with a view of a parsed message (tests, the general path).
    static func with<R>(_ message: WireMessage, _ body: (MessageView) -> R) -> R {
        var address = message.address
        return address.withUTF8 { address in
            message.wirePayload.withUnsafeBytes { payload in
                body(MessageView(message.wireHeader, address: UnsafeRawBufferPointer(address), payload: payload))
            }
        }
    }

    /// The address as text.
    /// - Throws: ``WireError`` `malformed-frame` when it is not UTF-8 or too long.
    func address() throws(WireError) -> String {
        guard addressBytes.count <= WireMessage.maximumAddressLength else {
            throw WireMessage.addressTooLong(addressBytes.count, correlation: correlation)
        }
        guard let text = String(validatingUTF8Quickly: addressBytes.assumingMemoryBound(to: UInt8.self)) else {
            throw WireError(.malformedFrame, inBatch ? "a batch envelope has an address that is not UTF-8" : "the address frame is not UTF-8",
                            correlation: correlation)
        }
        return text
    }

    /// The whole message, copied out, for rules that read its payload (control messages, route
    /// errors).
    /// - Throws: ``WireError`` `malformed-frame` when the address is not UTF-8 or too long.
    func message() throws(WireError) -> WireMessage {
        WireMessage(header, address: try address(), payload: Array(payloadBytes.assumingMemoryBound(to: UInt8.self)),
                    trace: traceBytes.map { Array($0.assumingMemoryBound(to: UInt8.self)) })
    }

    /// Appends the message's bytes to `batch` under `correlation`, as they are, with the trace
    /// context it came with unless `trace` replaces it (the coordinator's own span's; empty:
    /// none), and a keyed event's client id bound to `sender` when one is given (the client's
    /// CURVE key in Z85, ``IdempotencyKey/appendBound(_:to:into:correlation:)``): the key is the
    /// sender's, on whichever road it came.
    func append(to batch: inout BatchBuilder, correlation: UInt64, trace: [UInt8]? = nil, sender: [UInt8]? = nil) {
        // Typed buffers (the bytes are arrays of UInt8): a raw buffer offers no contiguous
        // storage to `Array.append(contentsOf:)`, which then copies byte by byte.
        let payload = payloadBytes.assumingMemoryBound(to: UInt8.self)
        let traceparent: [UInt8]
        if let trace {
            traceparent = trace
        } else if let traceBytes {
            traceparent = Array(traceBytes.assumingMemoryBound(to: UInt8.self))
        } else {
            traceparent = []
        }
        let binds = sender != nil && header.kind == .event && header.flags.contains(.keyed)
        guard !traceparent.isEmpty || binds else {
            batch.append(kind: header.kind, flags: header.flags, correlation: correlation,
                         address: addressBytes.assumingMemoryBound(to: UInt8.self), payload: payload)
            return
        }
        let flags = traceparent.isEmpty ? header.flags : header.flags.union(.traced)
        batch.append(kind: header.kind, flags: flags, correlation: correlation,
                     address: addressBytes.assumingMemoryBound(to: UInt8.self), writingPayload: { (bytes: inout [UInt8]) -> Void in
            if !traceparent.isEmpty { TraceParent.write(traceparent, into: &bytes) }
            guard binds, let sender else { return bytes.append(contentsOf: payload) }
            do {
                try IdempotencyKey.appendBound(payload, to: sender, into: &bytes, correlation: correlation)
            } catch {
                // Not reached: the core refuses a malformed key before it forwards
                // (``CoordinatorCore/decide(client:_:as:backlog:sender:)``). Were it, the key's
                // length byte 0 has the worker refuse it, never keep it unbound.
                bytes.append(0)
            }
        })
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
