@_spi(GroveInternal) import GroveWire

/// Numbers what the coordinator publishes and keeps the last published state of each watched
/// address: the zguide's Clone pattern, with the coordinator as the one publisher. Pure: the
/// driver asks it for a publication's number as it sends it, so numbers follow the order on
/// the socket.
///
/// Each topic counts on its own (1, 2, 3, … per topic in an epoch), not one count for the whole
/// socket: a watcher subscribes to prefixes and the events socket filters before it sends, so
/// under one count a watcher of `state:auth` would see the numbers of every other topic as
/// holes. Per topic, every number it misses is one it was meant to get.
struct PublicationLog {
    struct Record {
        var sequence: UInt64 = 0
        /// The last `state-changed` payload published on a `state:` topic, while someone watches it.
        var state: [UInt8]?
        /// A state was published but not kept (over ``maximumStateBytes``).
        var stateOmitted = false
    }

    /// The epoch publications are numbered in: random per coordinator life, and again whenever
    /// the log forgets its counts (so a watcher reads it as a restart, never as a gap).
    private(set) var epoch: CorrelationEpoch
    private(set) var records: [String: Record] = [:]
    /// The bytes of the states kept.
    private(set) var stateBytes = 0
    /// The bytes of the topics counted.
    private(set) var topicBytes = 0
    /// Topics counted before the log starts over under a new epoch: bounds its memory however
    /// many addresses are published.
    let maximumTopics: Int
    /// The bytes of topics counted before the log starts over, for the same reason: a million
    /// topics of the longest addresses would hold a gigabyte.
    let maximumTopicBytes: Int
    /// The bytes of states kept for snapshots; beyond it a state is omitted from snapshots.
    let maximumStateBytes: Int
    /// The largest payload published (`limits.publicationBytes`); a larger one is replaced by a
    /// `publication-too-large` error (``tooLarge(_:limit:)``), so the events socket's queue for
    /// a watcher that does not read is bounded in bytes, not only in count.
    let maximumPublicationBytes: Int
    private let nextEpoch: @Sendable () -> CorrelationEpoch

    /// - Parameters:
    ///   - epoch: The first epoch; a random one in a real coordinator.
    ///   - nextEpoch: The epoch to start over with once `maximumTopics` topics were counted.
    init(epoch: CorrelationEpoch, maximumTopics: Int = 1 << 20, maximumTopicBytes: Int = 32 << 20, maximumStateBytes: Int = 64 << 20,
         maximumPublicationBytes: Int = 64 << 10,
         nextEpoch: @escaping @Sendable () -> CorrelationEpoch = { CorrelationEpoch.random() }) {
        precondition(epoch.value != 0, "a publication epoch of 0 would read as 'not numbered'")
        self.epoch = epoch
        self.maximumTopics = maximumTopics
        self.maximumTopicBytes = maximumTopicBytes
        self.maximumStateBytes = maximumStateBytes
        self.maximumPublicationBytes = maximumPublicationBytes
        self.nextEpoch = nextEpoch
    }

    /// Numbers `message`, published now on `topic`, and keeps it when it is a state.
    /// - Returns: The message with its sequence in the header's correlation; in its place a
    ///   `publication-too-large` error under the same number when its payload is over
    ///   ``maximumPublicationBytes`` (its state then omitted from snapshots: read it with `get`).
    mutating func numbered(_ message: WireMessage, topic: String) -> WireMessage {
        if records[topic] == nil {
            if records.count >= maximumTopics || topicBytes + topic.utf8.count > maximumTopicBytes { startOver() }
            topicBytes += topic.utf8.count
        }
        var record = records[topic] ?? Record()
        if record.sequence == CorrelationEpoch.counterMask {
            // 2^40 publications on one topic: start over rather than wrap, so numbers only grow.
            startOver()
            topicBytes = topic.utf8.count
            record = Record()
        }
        record.sequence += 1
        let tooLarge = message.payload.count > maximumPublicationBytes
        if message.header.kind == .stateChanged, topic.hasPrefix("state:") {
            if tooLarge { omit(from: &record) } else { keep(message.payload, in: &record) }
        }
        records[topic] = record
        var numbered = tooLarge ? Self.tooLarge(message, limit: maximumPublicationBytes) : message
        numbered.header.correlation = PublicationSequence(epoch: epoch.value, number: record.sequence).correlation
        return numbered
    }

    private mutating func keep(_ payload: [UInt8], in record: inout Record) {
        stateBytes -= record.state?.count ?? 0
        record.state = nil
        // Spliced into a snapshot as it is: only what looks like the JSON object a worker sends.
        guard payload.first == UInt8(ascii: "{"), payload.last == UInt8(ascii: "}"),
              stateBytes + payload.count <= maximumStateBytes else {
            record.stateOmitted = true
            return
        }
        record.state = payload
        record.stateOmitted = false
        stateBytes += payload.count
    }

    /// A state published as too large: snapshots name it as omitted rather than give an
    /// older state under the newer number.
    private mutating func omit(from record: inout Record) {
        stateBytes -= record.state?.count ?? 0
        record.state = nil
        record.stateOmitted = true
    }

    private mutating func startOver() {
        records.removeAll()
        stateBytes = 0
        topicBytes = 0
        var next = nextEpoch()
        while next == epoch || next.value == 0 { next = CorrelationEpoch.random() }
        epoch = next
    }

    /// Forgets the states of topics no prefix covers any more (a watcher went away): their
    /// workers stop publishing them, so a kept state would go stale. Their counts stay.
    mutating func forgetStates(uncoveredBy prefixes: Set<String>) {
        for (topic, record) in records where record.state != nil || record.stateOmitted {
            guard !prefixes.contains(where: { topic.hasPrefix($0) }) else { continue }
            forgetState(of: topic)
        }
    }

    /// Forgets the states of `addresses` (their worker was lost: what it held may be gone).
    mutating func forgetStates(of addresses: [String]) {
        for address in addresses { forgetState(of: "state:" + address) }
    }

    private mutating func forgetState(of topic: String) {
        guard var record = records[topic] else { return }
        stateBytes -= record.state?.count ?? 0
        record.state = nil
        record.stateOmitted = false
        records[topic] = record
    }

    /// The `states` payload for a `snapshot` request: every kept state whose topic starts with
    /// one of `prefixes` (all when empty), sorted by topic. Built from the published bytes,
    /// without decoding them.
    func snapshot(prefixes: [String]) -> [UInt8] {
        let prefixes = prefixes.isEmpty ? [""] : prefixes
        var covered: [(topic: String, record: Record)] = []
        for (topic, record) in records where record.state != nil || record.stateOmitted {
            if prefixes.contains(where: { topic.hasPrefix($0) }) { covered.append((topic, record)) }
        }
        covered.sort { $0.topic < $1.topic }
        var out = Array(#"{"epoch":\#(epoch.value),"states":["#.utf8)
        var first = true
        for (topic, record) in covered {
            guard let state = record.state else { continue }
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out += Array(#"{"topic":\#(JSONValue.string(topic)),"sequence":\#(record.sequence),"payload":"#.utf8)
            out += state
            out.append(UInt8(ascii: "}"))
        }
        let omitted = covered.filter { $0.record.state == nil }.map { JSONValue.string($0.topic) }
        out += Array(#"],"omitted":\#(JSONValue.array(omitted))}"#.utf8)
        return out
    }
}
