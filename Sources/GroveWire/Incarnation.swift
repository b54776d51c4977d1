/// The epoch part of correlation ids: each coordinator life picks a random epoch and puts it in
/// bits 40–62 of every id it sends to workers, the lower 40 bits counting from 1; bit 63 stays 0,
/// free for a worker's own use (its hosts' reply tokens carry the codec there). A reply
/// that comes from an earlier life (a worker that outlived its coordinator answering a request
/// of the old one) carries another epoch and can never answer a request of this life, though
/// both lives count from 1.
///
/// 23 random bits make two lives share an epoch once in 8.4 million restarts; 40 bits of
/// counter last 12 days at a million requests a second before they wrap (to 1, skipping 0),
/// far longer than any request waits.
@_spi(GroveInternal) public struct CorrelationEpoch: Sendable, Hashable {
    /// The bits of an id below the epoch.
    public static let counterBits: UInt64 = 40
    /// The largest counter value; the next one is 1 again.
    public static let counterMask: UInt64 = (1 << counterBits) - 1

    /// The epoch, below 2^23. 0 only in tests that want ids 1, 2, 3.
    public let value: UInt64

    /// The largest epoch: 23 bits, so that an id never sets bit 63. With 24, half the
    /// coordinator lives made ids a worker could not fold into a reply token: every queued event
    /// then took the slower path of a closure per event, and an `unhandled` flag was lost.
    public static let largest: UInt64 = 0x7F_FFFF

    /// An epoch of `value` (its low 23 bits).
    public init(_ value: UInt64) {
        self.value = value & Self.largest
    }

    /// The epoch of the ids a worker gives the requests it serves on its direct endpoint
    /// (docs/DIRECT-ROUTES.md 1.7), so that a reply's epoch alone says which socket it leaves
    /// by: no coordinator life draws it (``random()``), and tests' epoch 0 is not it.
    public static let direct = CorrelationEpoch(largest)

    /// A random epoch, never 0 and never ``direct``.
    public static func random() -> CorrelationEpoch {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A random epoch drawn with `generator`, never 0 and never ``direct``.
    public static func random(using generator: inout some RandomNumberGenerator) -> CorrelationEpoch {
        CorrelationEpoch(UInt64.random(in: 1 ... largest - 1, using: &generator))
    }

    /// The id of `counter` (1 ... 2^40-1) in this epoch.
    @inlinable
    public func id(_ counter: UInt64) -> UInt64 {
        value << Self.counterBits | (counter & Self.counterMask)
    }

    /// Whether `id` was made in this epoch.
    @inlinable
    public func issued(_ id: UInt64) -> Bool {
        id >> Self.counterBits == value
    }

    /// The epoch an id was made in.
    public static func of(_ id: UInt64) -> UInt64 {
        id >> counterBits
    }
}

/// `instances`: the keyed instances a worker hosts, sent after each welcome (those it kept, and
/// those it brings back from its store), at most ``InstancesReport/perMessage`` addresses a
/// message. The coordinator lists them at once instead of after their next event.
@_spi(GroveInternal) public struct InstancesReport: Codable, Sendable, Hashable {
    /// Addresses per message, so a worker with 100,000 instances sends small messages.
    public static let perMessage = 1000

    public var instances: [String]

    public init(instances: [String]) {
        self.instances = instances
    }

    /// The reports for `addresses`, sorted, cut at ``perMessage`` and so that each report's
    /// JSON stays under `maxBytes` (the coordinator's frame limit); none for none.
    public static func reports(for addresses: some Sequence<String>, maxBytes: Int = .max) -> [InstancesReport] {
        // `{"instances":[]}` and an envelope's head and address, then each address counted as
        // if every byte were escaped: a bound, not a measure.
        let budget = maxBytes - 1024 - 32
        var reports: [InstancesReport] = []
        var current: [String] = []
        var bytes = 0
        for address in addresses.sorted() {
            let cost = 2 * address.utf8.count + 3
            if !current.isEmpty, current.count == perMessage || bytes + cost > budget {
                reports.append(InstancesReport(instances: current))
                current = []
                bytes = 0
            }
            current.append(address)
            bytes += cost
        }
        if !current.isEmpty { reports.append(InstancesReport(instances: current)) }
        return reports
    }
}

/// A coordinator's `heartbeat` to a worker: the incarnation it has registered under the
/// worker's name. A worker that reads another one was replaced and stops. An empty heartbeat
/// (from a worker, or an older coordinator) says nothing.
@_spi(GroveInternal) public struct HeartbeatNote: Codable, Sendable, Hashable {
    public var incarnation: UInt64

    public init(incarnation: UInt64) {
        self.incarnation = incarnation
    }
}
