public import GroveCluster
public import GroveWire
import ZeroMQ

/// Subscribes to a coordinator's events endpoint: state changes, effect lifecycle, workers.
///
/// Publications are numbered per topic; a watcher that falls behind has some dropped, and
/// ``next()`` tells how many (``Delivery/gap(topic:missed:)``) before the publication that
/// showed it. To catch up on the states, take a snapshot and apply it:
///
/// ```swift
/// let watcher = try Watcher(endpoint: events, prefixes: ["state:counter/"])
/// while true {
///     switch watcher.next() {
///     case .publication(let topic, let message, _)?: show(topic, message.payload)
///     case .gap?, .restarted?:
///         for entry in watcher.apply(try client.snapshot(prefixes: ["state:counter/"])) { show(entry.topic, entry.payload) }
///     case nil: continue
///     }
/// }
/// ```
public final class Watcher {
    private let context: ZMQContext
    private let socket: Socket

    /// Subscribes to every topic starting with one of `prefixes` (all topics when empty), e.g.
    /// `state:auth`, `effect:`, `worker:`.
    /// - Parameters:
    ///   - endpoint: The coordinator's events endpoint as this host reaches it; see
    ///     ``ClientEndpoint/connectable(_:via:)`` for turning a listing's `events` into one. By
    ///     default the default topology's, in this user's runtime directory.
    ///   - prefixes: Topic prefixes; empty for every topic.
    ///   - credentials: The keys for a coordinator that speaks CURVE (a client key whose `read`
    ///     role covers every machine); `nil` for one that does not.
    /// - Throws: ``WireError`` `untrusted-endpoint` when another local user may stand behind the
    ///   endpoint (see ``ClientEndpoint/verify(_:curve:uid:)``), `invalid-endpoint` when ZeroMQ
    ///   refuses it, `unreachable` when the socket cannot be set up.
    public init(endpoint: String = Watcher.defaultEndpoint, prefixes: [String] = [], credentials: Credentials? = nil) throws(WireError) {
        try ClientEndpoint.verify(endpoint, curve: credentials != nil)
        do {
            context = try ZMQContext()
            socket = try Socket(context, .sub)
            try socket.setLinger(milliseconds: 0)
            try socket.setReceiveHighWaterMark(100_000) // a watcher that falls behind loses publications, never blocks the coordinator
            try socket.setReceiveTimeout(milliseconds: 100)
            try credentials?.apply(to: socket)
            for prefix in prefixes.isEmpty ? [""] : prefixes { try socket.subscribe(Array(prefix.utf8)) }
        } catch {
            throw WireError(.unreachable, "cannot create a socket to subscribe to \(endpoint): \(error)")
        }
        do {
            try socket.connect(endpoint)
        } catch {
            throw ClientEndpoint.connectError(error, endpoint: endpoint, doing: "subscribe to")
        }
    }

    /// The events endpoint of the default topology as this user runs it (see ``RuntimeDirectory``).
    public static var defaultEndpoint: String { RuntimeDirectory.endpoints(ofTopology: "default").events }

    deinit {
        socket.close()
        context.terminate()
    }

    /// What ``next()`` hands out.
    public enum Delivery: Sendable {
        /// A publication, with the number the coordinator gave it on its topic (`nil` from a
        /// coordinator that predates numbering).
        case publication(topic: String, message: WireMessage, sequence: PublicationSequence?)
        /// `missed` publications on `topic` were dropped for this watcher (it fell more than
        /// `queues.watcherOutbox` behind): told just before the publication that showed it.
        case gap(topic: String, missed: UInt64)
        /// The coordinator restarted (or started counting afresh) since the last publication:
        /// what was missed in between cannot be counted. Told before the first publication of
        /// the new epoch.
        case restarted(fromEpoch: UInt64, toEpoch: UInt64)
    }

    private var tracker = PublicationTracker()
    private var queued: [Delivery] = []

    /// The next delivery within about 100 ms, or `nil`: a publication, or before it the gap
    /// or restart its number shows. A publication that a snapshot applied with ``apply(_:)``
    /// made stale is skipped.
    public func next() -> Delivery? {
        if !queued.isEmpty { return queued.removeFirst() }
        while true {
            guard let frames = try? socket.receive(dontWait: false) else { return nil }
            guard frames.count == 4, let message = try? WireMessage(frames: frames.dropFirst()) else { continue }
            let topic = String(decoding: frames[0], as: UTF8.self)
            let sequence = PublicationSequence(correlation: message.header.correlation)
            let verdict = tracker.observe(topic: topic, sequence: sequence)
            guard verdict.deliver else { continue }
            if let restarted = verdict.restarted { queued.append(.restarted(fromEpoch: restarted.from, toEpoch: restarted.to)) }
            if verdict.missed > 0 { queued.append(.gap(topic: topic, missed: verdict.missed)) }
            queued.append(.publication(topic: topic, message: message, sequence: sequence))
            return queued.removeFirst()
        }
    }

    /// Takes in a snapshot from ``Client/snapshot(prefixes:)``: publications it made stale are
    /// skipped from now on (the Clone pattern).
    /// - Returns: The snapshot's entries no older than what this watcher delivered: every
    ///   address's current state, save those a later publication was delivered for already.
    public func apply(_ snapshot: StateSnapshot) -> [StateSnapshot.Entry] {
        let current = tracker.apply(snapshot)
        // Publications received already but not handed out yet are stale too.
        let standing = Dictionary(snapshot.states.map { ($0.topic, $0.sequence) }, uniquingKeysWith: max)
        queued.removeAll { delivery in
            guard case .publication(let topic, _, let sequence?) = delivery, sequence.epoch == snapshot.epoch,
                  let number = standing[topic] else { return false }
            return sequence.number <= number
        }
        return current
    }
}
