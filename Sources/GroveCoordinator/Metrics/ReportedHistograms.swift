@_spi(GroveInternal) import GroveWire

/// The histograms workers report, added up per series and rendered as Prometheus text by hand
/// (docs/ARCHITECTURE.md, "Metrics": swift-prometheus 2.4.1's `Histogram` takes one value at a
/// time, `record(_:)`, and cannot be given bucket counts, so reported counts are kept here).
/// One series is a name and its labels, the worker's among them; each is cumulative over the
/// coordinator's life, its buckets as Prometheus wants them (`le` counts everything at or below).
struct ReportedHistograms {
    struct Key: Hashable, Comparable {
        var name: String
        /// Label pairs in the order rendered: the report's, sorted by name, then `worker`.
        var labels: [[String]]

        static func < (lhs: Key, rhs: Key) -> Bool {
            (lhs.name, lhs.labels.flatMap { $0 }.joined(separator: "\u{0}")) < (rhs.name, rhs.labels.flatMap { $0 }.joined(separator: "\u{0}"))
        }
    }

    private(set) var series: [Key: HistogramCounts] = [:]

    var count: Int { series.count }

    /// Why `delta` cannot be added (a name whose bounds are not known, a bucket count that does
    /// not match them, a negative or non-finite figure), or nil when it can.
    static func problem(with delta: MetricsReport.HistogramDelta) -> String? {
        guard let bounds = HistogramBounds.byName[delta.name] else {
            return "histogram '\(delta.name.prefix(CoordinatorMetrics.labelValueLimit))' is not one the coordinator knows (\(HistogramBounds.names.sorted().joined(separator: ", ")))"
        }
        guard delta.buckets.count == bounds.count + 1 else {
            return "histogram '\(delta.name)' came with \(delta.buckets.count) buckets, not \(bounds.count + 1) (its \(bounds.count) bounds and +Inf)"
        }
        guard delta.buckets.allSatisfy({ $0 >= 0 }) else { return "histogram '\(delta.name)' came with a negative bucket count" }
        guard delta.sum.isFinite, delta.sum >= 0 else { return "histogram '\(delta.name)' came with sum \(delta.sum), not a finite figure >= 0" }
        return nil
    }

    /// Whether the series exists already (adding to it makes none).
    func has(_ key: Key) -> Bool { series[key] != nil }

    /// Adds `delta`, which ``problem(with:)`` passed, to the series `key`.
    /// - Returns: Why it was not added (the series' count or sum would no longer fit: a
    ///   worker's report must not trap the coordinator on an overflow), or nil.
    mutating func add(_ delta: MetricsReport.HistogramDelta, to key: Key) -> String? {
        let bounds = HistogramBounds.byName[delta.name]!
        let existing = series[key] ?? HistogramCounts(bounds: bounds)
        var total = existing.count
        for count in delta.buckets {
            let (sum, overflow) = total.addingReportingOverflow(count)
            guard !overflow else { return "histogram '\(delta.name)' would count past \(Int.max) in one series" }
            total = sum
        }
        guard (existing.sum + delta.sum).isFinite else { return "histogram '\(delta.name)' would sum past the largest figure" }
        series[key, default: existing].add(buckets: delta.buckets, sum: delta.sum)
        return nil
    }

    /// The Prometheus text of every series: `# TYPE`, then per series its cumulative
    /// `_bucket{…,le="…"}` lines, `le="+Inf"`, `_sum` and `_count`.
    func render(into text: inout [UInt8]) {
        var lastName: String?
        for key in series.keys.sorted() {
            let counts = series[key]!
            if key.name != lastName {
                text += Array("# TYPE \(key.name) histogram\n".utf8)
                lastName = key.name
            }
            let labels = key.labels.map { "\($0[0])=\"\(Self.escaped($0[1]))\"" }
            var cumulative = 0
            for (index, bound) in counts.bounds.enumerated() {
                cumulative += counts.buckets[index]
                text += Array("\(key.name)_bucket{\((labels + ["le=\"\(bound)\""]).joined(separator: ","))} \(cumulative)\n".utf8)
            }
            cumulative += counts.buckets[counts.bounds.count]
            text += Array("\(key.name)_bucket{\((labels + ["le=\"+Inf\""]).joined(separator: ","))} \(cumulative)\n".utf8)
            let plain = labels.isEmpty ? "" : "{\(labels.joined(separator: ","))}"
            text += Array("\(key.name)_sum\(plain) \(counts.sum)\n".utf8)
            text += Array("\(key.name)_count\(plain) \(cumulative)\n".utf8)
        }
    }

    /// A label value as the exposition format escapes it: backslash, double quote, line feed.
    /// By bytes, not `Character`s: `"\r\n"` is one `Character`, which is not `"\n"`, and would
    /// put a raw line feed into the text.
    static func escaped(_ value: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
