/// The number a publication on the events socket carries in its header's correlation field:
/// the publisher's epoch in bits 40–62, the topic's count in the lower 40 (as
/// ``CorrelationEpoch`` lays out ids). Each topic counts 1, 2, 3, … within an epoch, so a
/// watcher that sees 5 after 2 on one topic missed 2 publications; a new epoch means the
/// publisher restarted (or started counting afresh), not a gap.
///
/// A correlation of 0 means the publisher does not number its publications (a coordinator that
/// predates numbering): ``init(correlation:)`` returns `nil` for it.
public struct PublicationSequence: Sendable, Hashable, CustomStringConvertible {
    /// The publisher's epoch, 1 ... 2^23-1.
    public let epoch: UInt64
    /// The topic's count in that epoch, 1 ... 2^40-1.
    public let number: UInt64

    /// - Parameters:
    ///   - epoch: The publisher's epoch (its low 23 bits are kept).
    ///   - number: The topic's count (its low 40 bits are kept).
    public init(epoch: UInt64, number: UInt64) {
        self.epoch = CorrelationEpoch(epoch).value
        self.number = number & CorrelationEpoch.counterMask
    }

    /// The sequence a publication's header carries; `nil` for 0 (not numbered).
    public init?(correlation: UInt64) {
        guard correlation != 0 else { return nil }
        self.init(epoch: CorrelationEpoch.of(correlation), number: correlation)
    }

    /// What goes into the publication's header.
    public var correlation: UInt64 { CorrelationEpoch(epoch).id(number) }

    public var description: String { "\(epoch):\(number)" }
}

/// `snapshot`: the topic prefixes a watcher subscribes to (all topics when empty). Only `state:`
/// topics have a state to snapshot: `["state:counter/"]` covers every counter instance,
/// `["effect:"]` none.
public struct SnapshotRequest: Codable, Sendable, Hashable {
    public var prefixes: [String]

    public init(prefixes: [String]) {
        self.prefixes = prefixes
    }
}

/// `states`, the answer to `snapshot`: the last state the coordinator published for each
/// watched address the prefixes cover, and the sequence number it was published under.
/// Publications on the same topic with a number up to that one are no newer than the state
/// here: a watcher skips them (the zguide's Clone pattern).
public struct StateSnapshot: Codable, Sendable, Hashable {
    /// One address's last published state.
    public struct Entry: Codable, Sendable, Hashable {
        /// `state:<address>`.
        public var topic: String
        /// The publication's number on that topic, in ``StateSnapshot/epoch``.
        public var sequence: UInt64
        /// The publication's payload: `{"address","worker","state"}`.
        public var payload: JSONValue

        public init(topic: String, sequence: UInt64, payload: JSONValue) {
            self.topic = topic
            self.sequence = sequence
            self.payload = payload
        }
    }

    /// The publisher's epoch the numbers count in.
    public var epoch: UInt64
    /// The states, by topic.
    public var states: [Entry]
    /// Topics covered whose state the coordinator did not keep (over its memory budget): ask
    /// their machines with `get`.
    public var omitted: [String]

    public init(epoch: UInt64, states: [Entry], omitted: [String] = []) {
        self.epoch = epoch
        self.states = states
        self.omitted = omitted
    }
}
