internal import CZeroMQ

/// The ZeroMQ socket patterns Grove uses.
package enum SocketType: Sendable, CustomStringConvertible {
    /// Addresses peers by routing id (frame 0); use with `setRouterMandatory(true)`.
    case router
    /// Round-robins to connected peers; the usual client of a ROUTER.
    case dealer
    /// Publishes to every matching subscriber; drops at the high-water mark.
    case pub
    /// Publishes like `pub`, and receives its subscribers' subscriptions: a frame whose first
    /// byte is 1 (subscribe) or 0 (unsubscribe) followed by the prefix. Without the verbose
    /// option a prefix is reported when its first subscriber arrives and its last one leaves.
    case xpub
    /// Receives publications whose first frame starts with a subscribed prefix.
    case sub
    /// Exactly one peer, both directions.
    case pair
    /// Load-balances messages to pullers.
    case push
    /// Fair-queues messages from pushers.
    case pull
    /// Raw TCP, no ZMTP: `[peer, bytes]` each way; an empty frame on connect and disconnect,
    /// and sending one closes the connection. How the coordinator answers HTTP scrapes.
    case stream

    /// The lower-case pattern name, e.g. `"router"`.
    package var description: String {
        switch self {
        case .router: "router"
        case .dealer: "dealer"
        case .pub: "pub"
        case .xpub: "xpub"
        case .sub: "sub"
        case .pair: "pair"
        case .push: "push"
        case .pull: "pull"
        case .stream: "stream"
        }
    }

    var raw: Int32 {
        switch self {
        case .router: ZMQ_ROUTER
        case .dealer: ZMQ_DEALER
        case .pub: ZMQ_PUB
        case .xpub: ZMQ_XPUB
        case .sub: ZMQ_SUB
        case .pair: ZMQ_PAIR
        case .push: ZMQ_PUSH
        case .pull: ZMQ_PULL
        case .stream: ZMQ_STREAM
        }
    }
}

/// A ZeroMQ socket. Not thread-safe: one thread uses it at a time. It may be handed to an
/// `IOLoop` before the loop starts, after which only the loop thread touches it.
///
/// ```swift
/// let socket = try Socket(context, .dealer)
/// try socket.setLinger(milliseconds: 0)
/// try socket.connect("ipc://@grove")
/// _ = try socket.send([Array("hello".utf8)], dontWait: false)
/// ```
package final class Socket {
    /// The socket's pattern.
    package let type: SocketType
    /// Keeps the context alive until this socket is gone.
    private let context: ZMQContext
    /// Read on every send and receive (see ``readsUserID``); set to nil by ``close()`` on the
    /// same thread.
    @exclusivity(unchecked) private(set) var handle: UnsafeMutableRawPointer?
    /// Whether an `IOLoop` reads each received message's ZAP `User-Id` into
    /// ``Inbound/userID`` (a property lookup and a string per message). Set before adding the
    /// socket to a loop.
    ///
    /// This and the two below are read on every message or frame: `@exclusivity(unchecked)`,
    /// as `LoopCore`'s, since the runtime's per-access bookkeeping cost a visible share of the
    /// coordinator's loop. Safe because they are set before the socket joins a loop and only
    /// read after.
    @exclusivity(unchecked) package var readsUserID = false
    /// The frames of a message that are copied out when it is received; later ones are received
    /// and dropped unread, so a message of a million frames costs what the first ones do. 0
    /// copies every frame. ZeroMQ itself assembles a whole message before it hands it over
    /// (no option bounds how many frames that holds).
    @exclusivity(unchecked) package var maximumFrames = 0
    /// On a ROUTER, counts the large frames sent to each peer until libzmq lets them go
    /// (``HeldBytes``); `nil` counts nothing. Set before adding the socket to a loop.
    @exclusivity(unchecked) package var heldBytes: HeldBytes?
    /// On a ROUTER, the routing ids of the last senders (``routingID(_:)``); touched only by
    /// the receiving thread.
    @exclusivity(unchecked) private var recentRoutingIDs: [[UInt8]] = []
    @exclusivity(unchecked) private var oldestRoutingID = 0

    /// Creates a socket of `type` in `context`.
    /// - Parameters:
    ///   - context: The context whose I/O threads serve the socket.
    ///   - type: The socket pattern.
    /// - Throws: `ZMQError`, e.g. `ETERM` when the context is terminated, `EMFILE` when out of sockets.
    package init(_ context: ZMQContext, _ type: SocketType) throws(ZMQError) {
        guard let handle = zmq_socket(context.handle, type.raw) else {
            throw ZMQError.last("create \(type) socket")
        }
        self.context = context
        self.type = type
        self.handle = handle
    }

    deinit { close() }

    /// Closes the socket. Idempotent. Unsent messages linger per `setLinger`.
    package func close() {
        guard let handle else { return }
        zmq_close(handle)
        self.handle = nil
    }

    /// Binds to a local endpoint, e.g. `tcp://127.0.0.1:*` or `ipc://@name`.
    /// - Parameter endpoint: The endpoint to listen on.
    /// - Throws: `ZMQError` naming the endpoint, e.g. `EADDRINUSE` when it is taken.
    package func bind(_ endpoint: String) throws(ZMQError) {
        let handle = try open("bind \(endpoint)")
        if zmq_bind(handle, endpoint) != 0 { throw ZMQError.last("bind \(endpoint)") }
    }

    /// Connects to an endpoint. Succeeds before the peer exists; libzmq reconnects in the background.
    /// - Parameter endpoint: The endpoint to connect to.
    /// - Throws: `ZMQError` naming the endpoint, e.g. `EINVAL` for a malformed endpoint.
    package func connect(_ endpoint: String) throws(ZMQError) {
        let handle = try open("connect \(endpoint)")
        if zmq_connect(handle, endpoint) != 0 { throw ZMQError.last("connect \(endpoint)") }
    }

    /// Disconnects from an endpoint previously connected with `connect(_:)`.
    /// - Parameter endpoint: The endpoint given to `connect(_:)`.
    /// - Throws: `ZMQError`, e.g. `ENOENT` when the socket was not connected to it.
    package func disconnect(_ endpoint: String) throws(ZMQError) {
        let handle = try open("disconnect \(endpoint)")
        if zmq_disconnect(handle, endpoint) != 0 { throw ZMQError.last("disconnect \(endpoint)") }
    }

    /// `ZMQ_LAST_ENDPOINT`: the endpoint last bound, with the real port after binding `tcp://…:*`.
    /// Empty when closed or never bound.
    package var lastEndpoint: String {
        guard let handle else { return "" }
        var buffer = [CChar](repeating: 0, count: 1024)
        var size = buffer.count
        guard zmq_getsockopt(handle, ZMQ_LAST_ENDPOINT, &buffer, &size) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `ZMQ_EVENTS & ZMQ_POLLIN`: a whole message can be received now without blocking.
    package var canReceive: Bool {
        guard let handle else { return false }
        var events: Int32 = 0
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(handle, ZMQ_EVENTS, &events, &size) == 0 else { return false }
        return events & Int32(ZMQ_POLLIN) != 0
    }

    /// Sends a multipart message, all or nothing: a message is never left half-sent.
    ///
    /// libzmq decides on the first frame whether a message can be queued (a ROUTER checks its
    /// peer there); once it accepts the first frame it accepts the rest.
    /// - Parameters:
    ///   - frames: The frames, at least one; for a ROUTER frame 0 is the peer's routing id.
    ///   - dontWait: Return at once instead of waiting (up to the send timeout) for room.
    /// - Returns: `false` when the message could not be queued (`EAGAIN`: high-water mark, no
    ///   peer, or send timeout); `true` when queued.
    /// - Throws: `ZMQError` for other failures, e.g. `EHOSTUNREACH` when a ROUTER with
    ///   `ROUTER_MANDATORY` does not know the peer, `EINVAL` for an empty message.
    package func send(_ frames: [[UInt8]], dontWait: Bool) throws(ZMQError) -> Bool {
        let handle = try open(sendOperation(frames))
        guard !frames.isEmpty else {
            throw ZMQError(errno: EINVAL, operation: "send an empty message (it needs at least one frame)")
        }
        let last = frames.count - 1
        for (index, frame) in frames.enumerated() {
            if index > 0, let held = counted(frame.count) {
                let sent = frame.withUnsafeBytes { raw in
                    Result { () throws(ZMQError) in
                        try sendCounted(raw, last: index == last, dontWait: dontWait, peer: frames[0], held: held, handle: handle,
                                        operation: sendOperation(frames))
                    }
                }
                try sent.get()
                continue
            }
            var flags = (dontWait ? ZMQ_DONTWAIT : 0) | (index < last ? ZMQ_SNDMORE : 0)
            while true {
                let rc = frame.withUnsafeBytes { zmq_send(handle, $0.baseAddress, $0.count, flags) }
                if rc >= 0 { break }
                let code = zmq_errno()
                if code == EINTR { continue }
                if index == 0 {
                    if code == EAGAIN { return false }
                    throw ZMQError(errno: code, operation: sendOperation(frames))
                }
                // Past the first frame libzmq does not refuse for lack of room; should it ever,
                // finish the message blocking rather than leave half of it queued.
                if code == EAGAIN && flags & ZMQ_DONTWAIT != 0 {
                    flags &= ~ZMQ_DONTWAIT
                    continue
                }
                throw ZMQError(errno: code, operation: sendOperation(frames))
            }
        }
        return true
    }

    /// Receives one whole multipart message.
    /// - Parameter dontWait: Return at once when nothing is waiting instead of blocking (up to
    ///   the receive timeout).
    /// - Returns: The frames (empty frames preserved), or `nil` on `EAGAIN` — nothing waiting
    ///   with `dontWait`, or the receive timeout expired.
    /// - Throws: `ZMQError` for other failures, e.g. `ETERM` or `ENOTSOCK` after `close()`.
    package func receive(dontWait: Bool) throws(ZMQError) -> [[UInt8]]? {
        try receive(dontWait: dontWait, userID: nil)?.frames
    }

    /// Receives one whole multipart message and the `User-Id` the ZAP handler gave its
    /// connection (RFC 27; `nil` when the connection was not authenticated).
    /// - Parameter dontWait: Return at once when nothing is waiting.
    /// - Returns: The frames and the user id, or `nil` on `EAGAIN`.
    /// - Throws: `ZMQError` as ``receive(dontWait:)`` does.
    package func receiveWithUserID(dontWait: Bool) throws(ZMQError) -> (frames: [[UInt8]], userID: String?)? {
        var userID: String?
        guard let (frames, _) = try receive(dontWait: dontWait, userID: &userID) else { return nil }
        return (frames, userID)
    }

    /// Receives one whole multipart message as the loop takes it: the frames copied out (at
    /// most ``maximumFrames``), the `User-Id` when the socket ``readsUserID``, and how many
    /// frames the message had, those dropped unread included, so that a refusal can say so.
    /// - Parameter dontWait: Return at once when nothing is waiting.
    /// - Returns: An ``Inbound`` on `socket`, or `nil` on `EAGAIN`.
    /// - Throws: `ZMQError` as ``receive(dontWait:)`` does.
    package func receiveInbound(dontWait: Bool, as socket: SocketID) throws(ZMQError) -> Inbound? {
        var userID: String?
        let received = readsUserID ? try receive(dontWait: dontWait, userID: &userID) : try receive(dontWait: dontWait, userID: nil)
        guard let (frames, frameCount) = received else { return nil }
        return Inbound(socket: socket, frames: frames, userID: userID, frameCount: frameCount)
    }

    private func receive(dontWait: Bool, userID: UnsafeMutablePointer<String?>?) throws(ZMQError) -> (frames: [[UInt8]], count: Int)? {
        let handle = try open("receive on \(type)")
        var message = zmq_msg_t()
        zmq_msg_init(&message)
        defer { zmq_msg_close(&message) }
        var frames: [[UInt8]] = []
        var count = 0
        var flags = dontWait ? ZMQ_DONTWAIT : 0
        while true {
            if zmq_msg_recv(&message, handle, flags) < 0 {
                let code = zmq_errno()
                if code == EINTR { continue }
                if code == EAGAIN && frames.isEmpty { return nil }
                // The parts of a message arrive together; wait for the rest should that ever differ.
                if code == EAGAIN && flags != 0 {
                    flags = 0
                    continue
                }
                throw ZMQError(errno: code, operation: "receive on \(type)")
            }
            let size = zmq_msg_size(&message)
            count += 1
            // Room for a whole message at its first frame, not grown frame by frame (an
            // allocation and a copy per growth, per message), and none when nothing waits.
            if frames.capacity == 0 { frames.reserveCapacity(Self.framesReserved) }
            if maximumFrames > 0, frames.count >= maximumFrames {
                // Past the frames a message may have: received (freed by the next receive) and dropped.
            } else if size == 0 {
                frames.append([])
            } else if count == 1, type == .router {
                frames.append(routingID(UnsafeRawBufferPointer(start: zmq_msg_data(&message), count: size)))
            } else {
                frames.append(Array(UnsafeRawBufferPointer(start: zmq_msg_data(&message), count: size)))
            }
            if zmq_msg_more(&message) == 0 {
                if let userID, let text = zmq_msg_gets(&message, "User-Id") { userID.pointee = String(cString: text) }
                return (frames, count)
            }
        }
    }

    /// The frames a received message is given room for at once: Grove's messages have three,
    /// four with a ROUTER's routing id.
    static let framesReserved = 4

    /// A ROUTER's frame 0, the sender's routing id: the array of one of the last few senders
    /// when it is theirs, shared instead of copied, as a few peers send most messages (a
    /// coordinator's clients and workers); otherwise copied and kept in place of the oldest.
    private func routingID(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        for index in recentRoutingIDs.indices where Self.same(recentRoutingIDs[index], bytes) {
            return recentRoutingIDs[index]
        }
        let id = Array(bytes)
        if recentRoutingIDs.count < Self.recentRoutingIDLimit {
            recentRoutingIDs.append(id)
        } else {
            recentRoutingIDs[oldestRoutingID] = id
            oldestRoutingID = (oldestRoutingID + 1) % Self.recentRoutingIDLimit
        }
        return id
    }

    /// Whether `id` holds `bytes` (`elementsEqual` walked both as sequences: most of the lookup).
    private static func same(_ id: [UInt8], _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard id.count == bytes.count else { return false }
        return id.withUnsafeBytes { kept in
            var index = 0
            while index < kept.count {
                if kept[index] != bytes[index] { return false }
                index += 1
            }
            return true
        }
    }

    /// How many senders' routing ids ``routingID(_:)`` keeps.
    static let recentRoutingIDLimit = 4

    /// The open handle, or `ENOTSOCK` naming `operation` when closed.
    func open(_ operation: @autoclosure () -> String) throws(ZMQError) -> UnsafeMutableRawPointer {
        guard let handle else { throw ZMQError(errno: ENOTSOCK, operation: operation()) }
        return handle
    }

    /// The ``heldBytes`` a frame of `size` bytes, not a message's first, is counted in; `nil` for
    /// one sent as usual.
    @inline(__always)
    func counted(_ size: Int) -> HeldBytes? {
        guard let heldBytes, size > heldBytes.threshold else { return nil }
        return heldBytes
    }

    func sendOperation(_ frames: [[UInt8]]) -> String {
        guard type == .router, let peer = frames.first else { return "send to \(type)" }
        return "send to router peer \(peerDescription(peer))"
    }
}

/// A routing id for humans: UTF-8 when printable, otherwise hex.
func peerDescription(_ id: [UInt8]) -> String {
    if !id.isEmpty, id.allSatisfy({ (0x20..<0x7F).contains($0) }) {
        return "\"\(String(decoding: id, as: UTF8.self))\""
    }
    return "0x" + id.map { byte in
        let hex = String(byte, radix: 16)
        return hex.count == 1 ? "0" + hex : hex
    }.joined()
}

@available(*, unavailable, message: "a Socket is used by one thread at a time")
extension Socket: Sendable {}
