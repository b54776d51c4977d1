/// An absolute point in time: the duration since the Unix epoch.
///
/// Timer deadlines are timestamps so that a snapshot taken in one process fires at the same moment
/// when restored in another.
public struct Timestamp: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Time elapsed since 1970-01-01T00:00:00Z.
    public var sinceEpoch: Duration

    /// The moment `sinceEpoch` after 1970-01-01T00:00:00Z.
    public init(sinceEpoch: Duration) { self.sinceEpoch = sinceEpoch }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.sinceEpoch < rhs.sinceEpoch }

    public static func + (lhs: Timestamp, rhs: Duration) -> Timestamp {
        Timestamp(sinceEpoch: lhs.sinceEpoch + rhs)
    }

    public static func - (lhs: Timestamp, rhs: Timestamp) -> Duration { lhs.sinceEpoch - rhs.sinceEpoch }

    public var description: String { "t+\(sinceEpoch)" }

    // Encoded as whole nanoseconds: compact and exact for any realistic date.
    public init(from decoder: any Decoder) throws {
        let nanoseconds = try decoder.singleValueContainer().decode(Int64.self)
        sinceEpoch = .nanoseconds(nanoseconds)
    }

    public func encode(to encoder: any Encoder) throws {
        let (seconds, attoseconds) = sinceEpoch.components
        var container = encoder.singleValueContainer()
        try container.encode(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
