/// One Grove message as it crosses a socket: header, address, payload. A ROUTER socket adds the
/// peer's routing id in front; ``frames`` and ``init(frames:)`` do not include it.
public struct WireMessage: Sendable, Hashable {
    public var header: Header
    /// A machine address (`name` or `name/key`), a worker name, or empty.
    public var address: String
    /// JSON (or binary with ``Header/Flags/binary``); may be empty. Without the trace
    /// context's prefix: that is ``trace``.
    public var payload: [UInt8]
    /// The W3C `traceparent` the message carries (``TraceParent``), as it came (not checked:
    /// the tracer that reads it does), or `nil`. On the wire it is the prefix of the payload
    /// that ``Header/Flags/traced`` announces; ``frames`` writes both, and parsing strips both,
    /// so ``header`` never has the flag.
    public var trace: [UInt8]?

    public init(_ header: Header, address: String = "", payload: [UInt8] = [], trace: [UInt8]? = nil) {
        var header = header
        header.flags.remove(.traced)
        self.header = header
        self.address = address
        self.payload = payload
        self.trace = trace
    }

    /// The header as it goes on the wire: ``Header/Flags/traced`` set when there is a ``trace``.
    public var wireHeader: Header {
        guard trace != nil else { return header }
        var header = header
        header.flags.insert(.traced)
        return header
    }

    /// The payload as it goes on the wire: ``trace``'s prefix, then ``payload``.
    public var wirePayload: [UInt8] {
        guard let trace else { return payload }
        return TraceParent.prefixed(trace, payload)
    }

    /// A message from its parts as they came: a traced payload's prefix becomes ``trace``.
    /// - Throws: ``WireError`` `malformed-frame` when the prefix runs past the payload.
    public init(wire header: Header, address: String, payload: ArraySlice<UInt8>) throws(WireError) {
        guard header.flags.contains(.traced) else {
            self.init(header, address: address, payload: Array(payload))
            return
        }
        let (trace, body) = try TraceParent.split(payload, correlation: header.correlation)
        self.init(header, address: address, payload: Array(body), trace: Array(trace))
    }

    /// The `error` reply to request `correlation`: the one way every process of Grove answers
    /// with a refusal. Its address is `address` when given, else the error's own; the payload
    /// names the address too when the error did not.
    /// - Parameters:
    ///   - error: What went wrong and what to do next.
    ///   - correlation: The id of the request it answers (0: none).
    ///   - address: The address the request named.
    package static func error(_ error: WireError, correlation: UInt64, address: String? = nil) -> WireMessage {
        var error = error
        if error.address == nil, let address, !address.isEmpty { error.address = address }
        return WireMessage(Header(.error, correlation: correlation), address: address ?? error.address ?? "", payload: error.payload)
    }

    /// The longest address accepted, in UTF-8 bytes: machine names and keys are meant to be
    /// short, and a batch envelope could not carry more than 65,535.
    public static let maximumAddressLength = 1024

    package static func addressTooLong(_ count: Int, correlation: UInt64) -> WireError {
        WireError(.malformedFrame, "the address has \(count) bytes; at most \(maximumAddressLength) are accepted (use a shorter key)",
                  correlation: correlation)
    }

    /// The three frames: header, address, payload (with the trace context's prefix, if any).
    public var frames: [[UInt8]] { [wireHeader.bytes, Array(address.utf8), wirePayload] }

    /// Parses the three frames of a message.
    /// - Throws: ``WireError`` when the header is malformed, the frame count is not 3 or the
    ///   address is not UTF-8.
    public init(frames: [[UInt8]]) throws(WireError) {
        try self.init(frames: frames[...])
    }

    /// Parses the three frames of a message from any collection of frames (a `Deque`, say).
    /// Arrays and array slices take the concrete initializers, which are faster.
    /// - Throws: ``WireError``, as ``init(frames:)-([[UInt8]])`` does.
    @_disfavoredOverload
    public init<Frames: Collection<[UInt8]>>(frames: Frames) throws(WireError) {
        try self.init(frames: Array(frames)[...])
    }

    /// Parses the three frames of a message, e.g. what follows a ROUTER's routing id.
    ///
    /// Concrete rather than generic over collections: a generic initializer is not specialized
    /// across modules, and the unspecialized one cost routers a third of their CPU per message.
    /// - Throws: ``WireError`` when the header is malformed, the frame count is not 3 or the
    ///   address is not UTF-8.
    public init(frames: ArraySlice<[UInt8]>) throws(WireError) {
        try self.init(frames: frames, received: frames.count)
    }

    /// Parses the three frames of a message of which a socket kept only the first `frames`
    /// (``init(frames:)-(ArraySlice<[UInt8]>)`` otherwise): a refusal for the frame count gives
    /// `count`, the frames the message had, not the ones kept.
    /// - Throws: ``WireError``, as ``init(frames:)-(ArraySlice<[UInt8]>)`` does.
    @_spi(GroveInternal) public init(frames: ArraySlice<[UInt8]>, received count: Int) throws(WireError) {
        guard let first = frames.first else {
            throw WireError(.malformedFrame, "an empty message; send three frames: header, address, payload")
        }
        let header = try Header(first)
        guard frames.count == 3, count == 3 else {
            throw WireError(.malformedFrame,
                "a message of kind \(header.kind.name) has \(max(count, frames.count)) frames; send exactly three: header, address, payload (empty frames are fine)",
                correlation: header.correlation)
        }
        if header.kind == .batch, let refusal = Batch.addressRefusal(frames[frames.startIndex + 1].count, correlation: header.correlation) {
            throw refusal
        }
        let address = try Self.address(frames[frames.startIndex + 1], correlation: header.correlation)
        try self.init(wire: header, address: address, payload: frames[frames.startIndex + 2][...])
    }

    /// The text of an address frame.
    /// - Throws: ``WireError`` `malformed-frame` when it is longer than
    ///   ``maximumAddressLength`` or not UTF-8.
    public static func address(_ frame: [UInt8], correlation: UInt64) throws(WireError) -> String {
        guard frame.count <= maximumAddressLength else {
            throw addressTooLong(frame.count, correlation: correlation)
        }
        guard let text = String(validatingUTF8Quickly: frame[...]) else {
            throw WireError(.malformedFrame, "the address frame is not UTF-8", correlation: correlation)
        }
        return text
    }
}
