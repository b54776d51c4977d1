import GroveWire

/// Which sequences of one client an instance applied, however long ago: what tells a repeat from
/// a new event once its answer has left the ``AnswerWindow``. A pure value, kept per instance and
/// client in the window and written with it.
///
/// Clients number the events they send to one address 1, 2, 3… (as `Client`, `fsm-send` and
/// `fsm-load` do), so what an instance applied of a client is nearly one run: everything up to
/// ``highest`` but the ``gaps``, the sequences not applied yet (copies lost with a worker, on
/// their way again). That is a few words however many events the client sent, the way an IPsec
/// anti-replay window or Kafka's producer sequences stay small.
///
/// Bounded: at most ``maximumGaps`` runs of missing sequences. Past that the oldest run is given
/// up and ``floor`` rises over it: a sequence at or under the floor can no longer be told, and is
/// refused rather than applied (``Verdict/unknown``). A client that numbers its events across
/// addresses leaves a gap at every instance for each event it sent elsewhere, so it reaches the
/// bound soon; its repeats are then refused, never applied twice.
package struct ClientSequences: Sendable, Hashable {
    /// How many runs of missing sequences are kept (what clients are told to keep to).
    package static var maximumGaps: Int { IdempotencyKey.openRunsKept }

    /// The highest sequence applied (0: none).
    package private(set) var highest: UInt64 = 0
    /// Sequences at or under it that are not kept can no longer be told.
    package private(set) var floor: UInt64 = 0
    /// Runs of sequences over ``floor`` and under ``highest`` not applied, in order, apart.
    package private(set) var gaps: [ClosedRange<UInt64>] = []

    /// What a sequence is to the instance.
    package enum Verdict: Equatable {
        /// Not applied: apply it.
        case new
        /// Applied already.
        case applied
        /// At or under ``floor``: applied or not, it cannot be told.
        case unknown
    }

    package init() {}

    package func verdict(of sequence: UInt64) -> Verdict {
        if sequence > highest { return .new }
        if sequence <= floor { return .unknown }
        return gapIndex(of: sequence) == nil ? .applied : .new
    }

    /// `sequence` was applied.
    package mutating func applied(_ sequence: UInt64) {
        if sequence > highest {
            if sequence > highest + 1 { gaps.append((highest + 1)...(sequence - 1)) }
            highest = sequence
        } else if let index = gapIndex(of: sequence) {
            let gap = gaps[index]
            var parts: [ClosedRange<UInt64>] = []
            if gap.lowerBound < sequence { parts.append(gap.lowerBound...(sequence - 1)) }
            if sequence < gap.upperBound { parts.append((sequence + 1)...gap.upperBound) }
            gaps.replaceSubrange(index...index, with: parts)
        } else {
            return
        }
        while gaps.count > Self.maximumGaps {
            floor = gaps.removeFirst().upperBound
        }
    }

    private func gapIndex(of sequence: UInt64) -> Int? {
        var low = 0, high = gaps.count
        while low < high {
            let middle = (low + high) / 2
            if gaps[middle].upperBound < sequence { low = middle + 1 } else { high = middle }
        }
        return low < gaps.count && gaps[low].contains(sequence) ? low : nil
    }
}

extension ClientSequences {
    /// Its bytes, as a store keeps them: a version byte (1), ``floor`` and ``highest`` (8 bytes
    /// each, little-endian), then each gap's bounds.
    package var encoded: [UInt8] {
        var bytes: [UInt8] = [1]
        bytes.reserveCapacity(17 + 16 * gaps.count)
        func append(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        append(floor)
        append(highest)
        for gap in gaps {
            append(gap.lowerBound)
            append(gap.upperBound)
        }
        return bytes
    }

    /// Reads ``encoded`` bytes; nil when they are not such bytes (a store that was damaged or
    /// written by a newer Grove).
    package init?(encoded bytes: [UInt8]) {
        guard bytes.first == 1, bytes.count >= 17, (bytes.count - 17) % 16 == 0 else { return nil }
        func value(at offset: Int) -> UInt64 {
            bytes[offset..<offset + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        floor = value(at: 1)
        highest = value(at: 9)
        var gaps: [ClosedRange<UInt64>] = []
        var offset = 17
        while offset < bytes.count {
            let low = value(at: offset), high = value(at: offset + 8)
            guard low <= high, low > (gaps.last?.upperBound ?? floor), high < highest else { return nil }
            gaps.append(low...high)
            offset += 16
        }
        guard floor <= highest, gaps.count <= Self.maximumGaps else { return nil }
        self.gaps = gaps
    }
}
