/// The payloads of io calls between workers (docs/PROTOCOL.md, "io calls"). The coordinator routes
/// them on a small head and never reads the request or the response: those travel as the bytes
/// their codec wrote (JSON, or the binary codec when the header's binary flag is set), from the
/// worker that encoded them to the one that decodes them.

/// The head of an `io-request` payload, read in place. The payload is:
///
/// ```
/// offset size
/// 0      2    name length n (big-endian), then n bytes of UTF-8: the request's name
/// 2+n    2    effect length e (big-endian), then e bytes: the effect id as JSON ("fetch" or 17)
/// 4+n+e  ...  the request as its codec wrote it, to the end of the payload
/// ```
///
/// ```swift
/// var payload: [UInt8] = []
/// try IOCallHead.write(name: "FetchItems", effect: Array(#""fetch""#.utf8), into: &payload)
/// try BinaryCodec.encode(request, into: &payload)             // header flag: binary
/// let head = try IOCallHead(reading: payload)                 // head.name == "FetchItems"
/// ```
@_spi(GroveInternal) public struct IOCallHead: Sendable, Hashable {
    /// The request's name: it selects the handler, and the worker group the topology places it on.
    public var name: String
    /// Where the effect id's JSON is in the payload.
    public var effect: Range<Int>
    /// Where the request's bytes are in the payload: after the head, to the end.
    public var body: Range<Int>

    /// Reads the head of an `io-request` payload.
    /// - Throws: ``WireError`` `malformed-frame` when the payload is shorter than its lengths say
    ///   or the name is not UTF-8.
    public init(reading payload: UnsafeRawBufferPointer) throws(WireError) {
        let bytes = payload.assumingMemoryBound(to: UInt8.self)
        func length(at offset: Int, of what: String) throws(WireError) -> Range<Int> {
            guard offset + 2 <= bytes.count else { throw Self.truncated(what) }
            let start = offset + 2
            let end = start + (Int(bytes[offset]) << 8 | Int(bytes[offset + 1]))
            guard end <= bytes.count else { throw Self.truncated(what) }
            return start..<end
        }
        let name = try length(at: 0, of: "name")
        guard let text = String(validatingUTF8Quickly: UnsafeBufferPointer(rebasing: bytes[name])) else {
            throw WireError(.malformedFrame, "the io request's name is not UTF-8")
        }
        self.name = text
        effect = try length(at: name.upperBound, of: "effect id")
        body = effect.upperBound..<bytes.count
    }

    /// ``init(reading:)`` for a payload in an array.
    public init(reading payload: [UInt8]) throws(WireError) {
        let head = payload.withUnsafeBytes { bytes in Result { () throws(WireError) in try IOCallHead(reading: bytes) } }
        self = try head.get()
    }

    /// Appends a head to `payload`; the request's bytes go after it.
    /// - Parameters:
    ///   - name: The request's name.
    ///   - effect: The effect id as JSON.
    /// - Throws: ``WireError`` `oversized` when the name or the effect id is longer than 65535 bytes.
    public static func write(name: String, effect: some Collection<UInt8>, into payload: inout [UInt8]) throws(WireError) {
        func check(_ count: Int, _ part: String) throws(WireError) {
            guard count > Int(UInt16.max) else { return }
            throw WireError(.oversized, "the io request's \(part) is \(count) bytes; at most 65535 fit its head, so shorten it")
        }
        try check(name.utf8.count, "name")
        try check(effect.count, "effect id")
        payload.append(UInt8(truncatingIfNeeded: name.utf8.count >> 8))
        payload.append(UInt8(truncatingIfNeeded: name.utf8.count))
        payload.append(contentsOf: name.utf8)
        payload.append(UInt8(truncatingIfNeeded: effect.count >> 8))
        payload.append(UInt8(truncatingIfNeeded: effect.count))
        payload.append(contentsOf: effect)
    }

    private static func truncated(_ what: String) -> WireError {
        WireError(.malformedFrame, "the io request's head is truncated at its \(what); see docs/PROTOCOL.md, 'io calls'")
    }
}

/// An `io-result` payload: one byte, then what it says.
///
/// ```
/// 0x00  the response, as the request's codec wrote it (the header's binary flag says which)
/// 0x01  a failure as JSON: {"code": "...", "message": "..."}
/// ```
@_spi(GroveInternal) public enum IOCallResult: Sendable, Hashable {
    /// The handler's response: its bytes, and whether they are in the binary codec.
    case response(ArraySlice<UInt8>, binary: Bool)
    /// The call failed; mirrors `IOFailure` in the Grove module.
    case failure(Failure)

    /// A code and a message, as `IOFailure` has them.
    public struct Failure: Codable, Sendable, Hashable {
        public var code: String
        public var message: String
        public init(code: String, message: String) {
            self.code = code
            self.message = message
        }
    }

    /// The first byte of an `io-result` payload.
    public enum Outcome: UInt8, Sendable {
        case response = 0
        case failure = 1
    }

    /// Reads an `io-result` payload; a response's bytes are not decoded, a failure's JSON is.
    /// - Parameter binary: Whether the header's binary flag is set.
    /// - Throws: ``WireError`` `malformed-frame` when the payload is empty or its first byte is
    ///   neither outcome, `malformed-json` when a failure does not decode.
    public init(reading payload: ArraySlice<UInt8>, binary: Bool) throws(WireError) {
        switch try Self.outcome(of: payload.first) {
        case .response:
            self = .response(payload.dropFirst(), binary: binary)
        case .failure:
            self = .failure(try WireJSON.decode(Failure.self, from: Array(payload.dropFirst()), code: .malformedJSON, what: "the io failure"))
        }
    }

    /// ``init(reading:binary:)-(ArraySlice<UInt8>,_)`` for a payload in an array.
    public init(reading payload: [UInt8], binary: Bool) throws(WireError) {
        try self.init(reading: payload[...], binary: binary)
    }

    /// The failure an `io-result` payload carries, read in place; nil for a response, whose
    /// bytes are not looked at. What the coordinator reads to publish how a call ended.
    /// - Throws: ``WireError`` as ``init(reading:binary:)``.
    public static func failure(in payload: some Collection<UInt8>) throws(WireError) -> Failure? {
        switch try outcome(of: payload.first) {
        case .response:
            return nil
        case .failure:
            return try WireJSON.decode(Failure.self, from: Array(payload.dropFirst()), code: .malformedJSON, what: "the io failure")
        }
    }

    private static func outcome(of first: UInt8?) throws(WireError) -> Outcome {
        guard let first, let outcome = Outcome(rawValue: first) else {
            throw WireError(.malformedFrame,
                "an io result starts with 0 (a response) or 1 (a failure), not \(first.map(String.init) ?? "nothing"); see docs/PROTOCOL.md, 'io calls'")
        }
        return outcome
    }

    /// The payload of a failed call.
    public static func payload(failure: Failure) -> [UInt8] {
        [Outcome.failure.rawValue] + ((try? WireJSON.encode(failure)) ?? [])
    }

    /// The payload of a failed call, from its code and message.
    public static func payload(failing code: String, _ message: String) -> [UInt8] {
        payload(failure: Failure(code: code, message: message))
    }
}

/// What the worker running an io request says of its task when told to cancel it: the
/// `io-cancelled` payload (docs/PROTOCOL.md, "io calls"), sent once the task has ended, never
/// before.
///
/// ```json
/// {"task": "ended", "endedAtNs": 81234567890123}
/// ```
public struct IOCancelAnswer: Codable, Sendable, Hashable {
    /// The task's fate.
    public enum TaskFate: String, Codable, Sendable, Hashable {
        /// It was running when the cancel came, and has ended since.
        case ended
        /// It had finished before the cancel came: its result was on the way (and is dropped).
        case finished
        /// The worker knows no such call: it never arrived, or it finished too long ago for the
        /// worker to remember (it remembers its last 1024).
        case unknown
        /// Said by the coordinator, not by a worker: the worker running the task was lost before
        /// it answered, so nothing runs it any more.
        case workerLost = "worker-lost"
    }

    /// What became of the task.
    public var task: TaskFate
    /// When the task ended (for ``TaskFate/ended``), on the executing worker's `CLOCK_MONOTONIC`, in
    /// nanoseconds: comparable only with that clock on the same host (Scripts/cancel-bench.sh
    /// measures cancel latency with it).
    public var endedAtNs: UInt64?

    public init(task: TaskFate, endedAtNs: UInt64? = nil) {
        self.task = task
        self.endedAtNs = endedAtNs
    }
}
