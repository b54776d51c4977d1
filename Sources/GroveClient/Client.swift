public import GroveCluster
public import GroveWire
import Foundation
import Logging
import Tracing
import ZeroMQ

/// A synchronous client of a running topology: what `fsm-send` uses. One request at a time;
/// every call fails cleanly within `timeout` when the coordinator is not there.
///
/// ```swift
/// let client = try Client(retryUnavailable: true)   // the default topology's clients endpoint
/// let state = try client.send(Array(#"{"startLogin":{}}"#.utf8), to: "auth")   // the committed state, JSON
/// ```
public final class Client {
    public let endpoint: String
    public let timeout: Duration
    /// Whether requests answered `unavailable` are sent again; see ``init(endpoint:timeout:retryUnavailable:)``.
    public let retryUnavailable: Bool
    /// The road requests to machines take: through the coordinator (the default), or straight
    /// to the worker that runs each machine once the coordinator has located it.
    public let route: Route
    /// Whether the connection speaks CURVE: a refused key then looks like no coordinator at all.
    let usesCurve: Bool
    let credentials: Credentials?
    let context: ZMQContext
    let socket: Socket
    /// Decides correlations, what replies mean and retries; this class only moves the bytes.
    var core: ClientCore
    /// With ``Route/direct``: where each machine lives, and the road for each request.
    var roads = RouteCore()
    /// With ``Route/direct``: a socket per worker endpoint, made on first use.
    var directSockets: [String: Socket] = [:]
    /// Correlations of this client's own `locate` requests (``locate(_:)``'s are the core's).
    var nextLocate: UInt64 = Client.locateCorrelations
    /// The process's tracer, read once when the client is made; `nil` when none was
    /// bootstrapped: then no span is made and requests carry no trace context.
    private let tracing: WireTracing?

    /// Connects (lazily, as ZeroMQ does) to a coordinator's clients endpoint.
    /// - Parameters:
    ///   - endpoint: The coordinator's clients endpoint, `ipc://PATH` or `tcp://HOST:PORT`;
    ///     by default the default topology's, in this user's runtime directory.
    ///   - timeout: How long a request may wait to be sent, and for its reply; must be positive.
    ///   - retryUnavailable: When `true`, a request answered `unavailable` (the machine's worker
    ///     is starting or restarting) is sent again after 50 ms, doubling to 500 ms, until
    ///     `timeout` has passed since it was first sent; then the last `unavailable` is thrown.
    ///     Safe because the coordinator answers `unavailable` before forwarding anything, so the
    ///     machine never saw the request. Without `keyedAttempts`, no other error is retried:
    ///     an event that reached a machine is never sent twice. `fsm-send` sets it; the default
    ///     is `false`.
    ///   - keyedAttempts: Above 1, every event carries an idempotency key (a random client id
    ///     picked once per `Client`, and a sequence per event) and is sent again with the same key
    ///     when answered `worker-lost` or `unavailable`, or not answered within `timeout`, up to
    ///     this many sends in all, pausing 50 ms doubling to 2 s between them: the worker answers
    ///     a key it applied already with its first answer, so the event applies once. A resend
    ///     whose first answer the worker no longer keeps is thrown as ``WireError`` code
    ///     `already-applied`: the event did apply, once; read what it left with `state(of:)`
    ///     (as `fsm-send` does), and do not send it again under a new key. 1 (the
    ///     default): events carry no key, and only `retryUnavailable` resends.
    ///   - credentials: The keys for a coordinator that speaks CURVE; `nil` for one that does not.
    ///   - route: ``Route/direct`` sends requests to machines (events, `get`, `stop`, `restart`,
    ///     `cancel`) straight to their worker, located once per machine through the coordinator,
    ///     and falls back to the coordinator road for what no worker serves directly (see
    ///     docs/DIRECT-ROUTES.md). Everything else goes through the coordinator either way.
    /// - Throws: ``WireError`` `untrusted-endpoint` when another local user may stand behind the
    ///   endpoint (see ``ClientEndpoint/verify(_:curve:uid:)``), `invalid-endpoint` when ZeroMQ
    ///   refuses it, `unreachable` when the socket cannot be set up.
    public init(endpoint: String = Client.defaultEndpoint, timeout: Duration = .seconds(5), retryUnavailable: Bool = false,
                keyedAttempts: Int = 1, credentials: Credentials? = nil, route: Route = .coordinator) throws(WireError) {
        self.endpoint = endpoint
        self.route = route
        self.credentials = credentials
        self.timeout = timeout
        self.retryUnavailable = retryUnavailable
        core = ClientCore(timeout: timeout, retryUnavailable: retryUnavailable, keyedAttempts: keyedAttempts)
        tracing = WireTracing.bootstrapped(log: Logger(label: "grove.client"))
        usesCurve = credentials != nil
        try ClientEndpoint.verify(endpoint, curve: credentials != nil)
        // At least 1 ms: 0 would make every send and receive non-blocking.
        let milliseconds = max(1, Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000))
        do {
            context = try ZMQContext()
            socket = try Socket(context, .dealer)
            try socket.setLinger(milliseconds: 0)
            try socket.setSendHighWaterMark(1000)
            try socket.setReceiveHighWaterMark(1000)
            try socket.setImmediate(true)
            try socket.setSendTimeout(milliseconds: milliseconds)
            try socket.setReceiveTimeout(milliseconds: milliseconds)
            try credentials?.apply(to: socket)
        } catch {
            throw WireError(.unreachable, "cannot create a socket for \(endpoint): \(error)")
        }
        do {
            try socket.connect(endpoint)
        } catch {
            throw ClientEndpoint.connectError(error, endpoint: endpoint, doing: "connect to")
        }
    }

    deinit {
        for direct in directSockets.values { direct.close() }
        socket.close()
        context.terminate()
    }

    /// Sends one request and waits for its reply; with `retryUnavailable`, sends it again while
    /// the answer is `unavailable` and `timeout` has not passed.
    /// - Returns: The reply (`state`, `accepted` or `listing`).
    /// - Throws: The ``WireError`` of an `error` reply, or `unreachable`/`timeout`.
    @discardableResult
    public func request(_ kind: MessageKind, address: String = "", payload: [UInt8] = [], flags: Header.Flags = []) throws(WireError) -> WireMessage {
        guard let tracing else { return try exchange(kind, address: address, payload: payload, flags: flags, trace: nil) }
        // The request's own span, the root of its trace unless the caller's task has one
        // bound (`ServiceContext.current`); its traceparent travels with the request.
        let span = tracing.tracer.startSpan("\(kind.name) \(address)", context: ServiceContext.current ?? .topLevel, ofKind: .client)
        span.attributes["grove.address"] = address
        defer { span.end() }
        do {
            return try exchange(kind, address: address, payload: payload, flags: flags, trace: tracing.traceparent(of: span.context))
        } catch {
            span.setStatus(SpanStatus(code: .error, message: error.code.rawValue))
            throw error
        }
    }

    private func exchange(_ kind: MessageKind, address: String, payload: [UInt8], flags: Header.Flags,
                          trace: [UInt8]?) throws(WireError) -> WireMessage {
        let clock = ContinuousClock()
        var message = core.start(kind, address: address, payload: payload, flags: flags, now: clock.now, trace: trace)
        var road = road(for: kind, address: address)
        let deadline = clock.now + timeout
        try transmit(message, kind: kind, address: address, on: &road, until: deadline)
        while true {
            var frames: [[UInt8]]
            do {
                frames = try receive(kind, address: address, on: road)
            } catch where error.code == .timeout {
                switch road.target.map({ judgeSilence(of: $0, address: address) }) {
                case .keepWaiting? where clock.now < deadline:
                    continue
                case .lost(let lost)?:
                    // Answered for the worker that went away; the core decides whether to resend.
                    frames = WireMessage(Header(.error, correlation: message.header.correlation), address: address, payload: lost.payload).frames
                    road = self.road(for: kind, address: address)
                case .keepWaiting?, nil:
                    guard case .send(let again, let pause) = core.timedOut(error) else { throw error }
                    message = again
                    Thread.sleep(forTimeInterval: Self.seconds(pause))
                    road = self.road(for: kind, address: address)
                    try transmit(message, kind: kind, address: address, on: &road, until: deadline)
                    continue
                }
            }
            if case .direct = road, let moved = Self.moved(in: frames, answering: message.header.correlation) {
                // Never reached a machine: send it again by the road the answer points to.
                switch roads.moved(moved, address: address) {
                case .resend(let pause):
                    Thread.sleep(forTimeInterval: Self.seconds(pause))
                    road = self.road(for: kind, address: address)
                case .resendByCoordinator:
                    road = .coordinator
                }
                try transmit(message, kind: kind, address: address, on: &road, until: deadline)
                continue
            }
            switch core.received(frames, now: clock.now) {
            case .receiveAgain:
                continue
            case .send(let again, let pause):
                message = again
                Thread.sleep(forTimeInterval: Self.seconds(pause))
                road = self.road(for: kind, address: address)
                try transmit(message, kind: kind, address: address, on: &road, until: deadline)
            case .reply(let reply):
                return reply
            case .fail(let error):
                throw error
            }
        }
    }

    /// With CURVE, a coordinator that refused the handshake is silent as one that is not there:
    /// the coordinator's log says which (a key it does not accept, a frame over its limit).
    var curveHint: String {
        usesCurve ? ". With keys, the coordinator may also have refused this client's key (not in security.clients, or "
            + "--coordinator-key is not its key) or a message over limits.messageBytes: its log says so" : ""
    }

    /// Sends one message, waiting at most `timeout` for the socket to take it.
    func transmit(_ message: WireMessage) throws(WireError) {
        do {
            guard try socket.send(message.frames, dontWait: false) else {
                throw WireError(.unreachable, "no coordinator at \(endpoint) within \(timeout); is fsm-launch running, "
                    + "and is this the clients endpoint its ready line prints? Pass that endpoint (fsm-send and fsm-load: "
                    + "--endpoint; fsm-send also reads FSM_ENDPOINT)" + curveHint)
            }
        } catch let error as WireError {
            throw error
        } catch {
            throw WireError(.unreachable, "sending to \(endpoint) failed: \(error)")
        }
    }

    /// Waits at most `timeout` for the next message's frames.
    func receive(_ kind: MessageKind, address: String) throws(WireError) -> [[UInt8]] {
        let frames: [[UInt8]]?
        do {
            frames = try socket.receive(dontWait: false)
        } catch {
            throw WireError(.unreachable, "receiving from \(endpoint) failed: \(error)")
        }
        guard let frames else {
            throw WireError(.timeout, "no reply from \(endpoint) within \(timeout) for \(kind.name) \(address); "
                + "the coordinator, or the worker hosting \(address), may be down, stopped or overloaded" + curveHint)
        }
        return frames
    }

    /// The clients endpoint of the default topology as this user runs it:
    /// `ipc://<runtime directory>/default/clients` (see ``RuntimeDirectory``).
    public static var defaultEndpoint: String { RuntimeDirectory.endpoints(ofTopology: "default").clients }

    static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Sends an event (JSON) and returns the state it committed, as JSON.
    public func send(_ event: [UInt8], to address: String) throws(WireError) -> [UInt8] {
        try sendReply(event, to: address).payload
    }

    /// ``send(_:to:)``, with the reply's header: its `unhandled` flag says the machine's
    /// `update` did not handle the event (the state is the one it was already in).
    public func sendReply(_ event: [UInt8], to address: String) throws(WireError) -> WireMessage {
        try request(.event, address: address, payload: event)
    }

    /// Sends an event and returns once the machine queued it.
    public func post(_ event: [UInt8], to address: String) throws(WireError) {
        try request(.event, address: address, payload: event, flags: .noWait)
    }

    /// The machine's current state, as JSON.
    public func state(of address: String) throws(WireError) -> [UInt8] {
        try request(.get, address: address).payload
    }

    /// Stops a machine; returns its final state.
    public func stop(_ address: String) throws(WireError) -> [UInt8] {
        try request(.stop, address: address).payload
    }

    /// Restarts a machine from its initial state, whatever its topology's `onEnd` says: a
    /// running one is stopped first, after the events sent before. Needs the `admin` role.
    /// - Parameter address: The machine's address; a keyed instance must have been spawned.
    /// - Returns: The new instance's state, as JSON.
    /// - Throws: ``WireError``: `forbidden` without the admin role, `unknown-machine` for a
    ///   keyed instance no event has spawned (or one its machine removed when it ended).
    public func restart(_ address: String) throws(WireError) -> [UInt8] {
        try request(.restart, address: address).payload
    }

    /// Cancels the effect `id` (JSON: `"fetch"` or `17`) of a machine.
    public func cancel(effect id: [UInt8], of address: String) throws(WireError) {
        try request(.cancel, address: address, payload: id)
    }

    /// The topology's machines and workers.
    public func list() throws(WireError) -> Listing {
        try WireJSON.decode(Listing.self, from: request(.list).payload, code: .malformedFrame, what: "the listing")
    }

    /// Where `address`'s machine lives (docs/PROTOCOL.md, "Locating a machine"): its workers in
    /// placement order, with the direct endpoint of each that serves one.
    /// - Throws: ``WireError`` as ``request(_:address:payload:flags:)`` does; `forbidden` for a
    ///   key with no role on the machine, `unknown-kind` from a coordinator older than `locate`.
    public func locate(_ address: String) throws(WireError) -> Location {
        try WireJSON.decode(Location.self, from: request(.locate, address: address).payload, code: .malformedFrame, what: "the location")
    }

    /// The last state the coordinator published for each watched address whose `state:` topic
    /// starts with one of `prefixes` (all when empty), with the number each was published
    /// under: hand it to ``Watcher/apply(_:)`` to skip the publications it makes stale.
    /// - Parameter prefixes: The watcher's topic prefixes, e.g. `["state:counter/"]`.
    /// - Throws: ``WireError`` as ``request(_:address:payload:flags:)`` does; `forbidden` for a
    ///   key without the `read` role over every machine.
    public func snapshot(prefixes: [String]) throws(WireError) -> StateSnapshot {
        let payload = Array(JSONValue.object(["prefixes": .array(prefixes.map(JSONValue.string))]).jsonData)
        return try WireJSON.decode(StateSnapshot.self, from: request(.snapshot, payload: payload).payload, code: .malformedFrame,
                                   what: "the snapshot")
    }
}
