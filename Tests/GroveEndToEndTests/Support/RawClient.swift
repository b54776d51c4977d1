import Foundation
import GroveWire
import ZeroMQ

/// A ZeroMQ DEALER talking protocol v1 by hand: for pipelining, and for sending what no
/// well-behaved client would (garbage frames, other versions, oversized payloads).
final class RawClient {
    let endpoint: String
    private let context: ZMQContext
    private let socket: Socket

    /// - Parameter receiveQueue: The replies ZeroMQ may read ahead for this client; 0, the
    ///   default, for no limit. A small one makes a client that does not read stop the
    ///   coordinator's sends to it, as a slow client does.
    /// A CURVE client's keys: the server's public key and its own pair.
    struct Curve: Sendable {
        var server: CurveKey
        var keys: CurveKeyPair

        /// The public key of a certificate file (`NAME.key`, or the secret file's public line).
        static func publicKey(file: String) throws -> CurveKey {
            guard let key = CurveKey(z85: try field("public-key", in: file)) else { throw HarnessError("no public key in \(file)") }
            return key
        }

        /// The pair of a secret certificate file (`NAME.key_secret`).
        static func keyPair(file: String) throws -> CurveKeyPair {
            guard let secret = CurveKey(z85: try field("secret-key", in: file)) else { throw HarnessError("no secret key in \(file)") }
            return CurveKeyPair(publicKey: try publicKey(file: file), secretKey: secret)
        }

        private static func field(_ name: String, in file: String) throws -> String {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if parts.count == 2, parts[0] == name { return parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            }
            throw HarnessError("no \(name) line in \(file)")
        }
    }

    init(endpoint: String, receiveQueue: Int32 = 0, curve: Curve? = nil) throws {
        self.endpoint = endpoint
        context = try ZMQContext()
        socket = try Socket(context, .dealer)
        try socket.setLinger(milliseconds: 0)
        try socket.setReceiveTimeout(milliseconds: 100)
        try socket.setSendTimeout(milliseconds: 5000)
        try socket.setSendHighWaterMark(0)
        try socket.setReceiveHighWaterMark(receiveQueue)
        if let curve { try socket.becomeCurveClient(of: curve.server, keys: curve.keys) }
        try socket.connect(endpoint)
    }

    deinit {
        socket.close()
        context.terminate()
    }

    /// Sends arbitrary frames.
    func send(frames: [[UInt8]]) throws {
        guard try socket.send(frames, dontWait: false) else { throw HarnessError("could not send to \(endpoint)") }
    }

    func send(_ message: WireMessage) throws { try send(frames: message.frames) }

    /// Sends an event: header, address, payload.
    func sendEvent(_ payload: String, to address: String, correlation: UInt64, flags: Header.Flags = []) throws {
        try send(WireMessage(Header(.event, flags: flags, correlation: correlation), address: address, payload: Array(payload.utf8)))
    }

    /// The next reply within `timeout`, as raw frames.
    func receiveFrames(timeout: Duration = .seconds(10)) throws -> [[UInt8]]? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let frames = try socket.receive(dontWait: false) { return frames }
        }
        return nil
    }

    /// The next reply within `timeout`, parsed.
    /// - Throws: ``HarnessError`` when none arrives in time; `WireError` when it is not a message.
    func receive(timeout: Duration = .seconds(10)) throws -> WireMessage {
        guard let frames = try receiveFrames(timeout: timeout) else {
            throw HarnessError("no reply from \(endpoint) within \(timeout)")
        }
        return try WireMessage(frames: frames)
    }

    /// The next `count` replies in the order they arrived, a batch's envelopes one by one.
    func receiveReplies(_ count: Int, timeout: Duration = .seconds(10)) throws -> [WireMessage] {
        var replies: [WireMessage] = []
        while replies.count < count {
            let reply = try receive(timeout: timeout)
            replies += reply.header.kind == .batch ? try Batch.unpack(reply.payload) : [reply]
        }
        return replies
    }

    /// Sends and waits for the reply with the same correlation id (others are dropped).
    func request(_ message: WireMessage, timeout: Duration = .seconds(10)) throws -> WireMessage {
        try send(message)
        let deadline = ContinuousClock.now + timeout
        while true {
            let reply = try receive(timeout: deadline - ContinuousClock.now)
            if reply.header.correlation == message.header.correlation { return reply }
        }
    }
}

extension WireMessage {
    /// The payload of an `error` reply.
    var error: WireError? {
        guard header.kind == .error else { return nil }
        return try? WireJSON.decode(WireError.self, from: payload)
    }

    /// The payload as JSON.
    var json: JSONValue? { try? JSONValue(parsing: Data(payload)) }
}

/// Runs blocking work (a raw client's send/receive loop) on a thread of its own, so that several
/// can run at once without starving the test's executor.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.start()
    }
}
