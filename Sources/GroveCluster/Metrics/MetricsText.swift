/// A Prometheus text exposition read back (docs/ARCHITECTURE.md, "Metrics"): what fsm-load
/// needs of the coordinator's endpoint to put its figures beside its own. Reads sample lines
/// (`name{label="value",…} number`), skips comments; a line it cannot read is skipped, not
/// fatal, since the text is the coordinator's and only some series are wanted.
package struct MetricsText: Sendable, Equatable {
    package struct Sample: Sendable, Equatable {
        package var name: String
        package var labels: [String: String]
        package var value: Double

        package init(name: String, labels: [String: String], value: Double) {
            self.name = name
            self.labels = labels
            self.value = value
        }
    }

    package var samples: [Sample]

    package init(samples: [Sample]) {
        self.samples = samples
    }

    package init(_ text: String) {
        samples = text.split(separator: "\n").compactMap { Self.sample(String($0)) }
    }

    /// The sum of `name`'s samples whose labels include `matching`.
    package func sum(_ name: String, matching: [String: String] = [:]) -> Double {
        samples.filter { sample in sample.name == name && matching.allSatisfy { sample.labels[$0.key] == $0.value } }.reduce(0) { $0 + $1.value }
    }

    /// `name`'s samples summed by the value of label `label`.
    package func sum(_ name: String, by label: String) -> [String: Double] {
        var sums: [String: Double] = [:]
        for sample in samples where sample.name == name {
            guard let value = sample.labels[label] else { continue }
            sums[value, default: 0] += sample.value
        }
        return sums
    }

    /// Histogram `name`'s cumulative buckets summed over every series (every worker, machine
    /// type…), by bound, `+Inf` as infinity; ascending.
    package func buckets(_ name: String) -> [(bound: Double, count: Double)] {
        var byBound: [Double: Double] = [:]
        for sample in samples where sample.name == name + "_bucket" {
            guard let le = sample.labels["le"], let bound = le == "+Inf" ? .infinity : Double(le) else { continue }
            byBound[bound, default: 0] += sample.value
        }
        return byBound.keys.sorted().map { ($0, byBound[$0]!) }
    }

    /// The `quantile` (0…1) of cumulative `buckets` (the difference of two scrapes, say), as
    /// Prometheus' `histogram_quantile` estimates it: linear within the bucket that holds it, the
    /// last finite bound when it falls in `+Inf`. Nil when the buckets hold nothing.
    package static func quantile(_ quantile: Double, of buckets: [(bound: Double, count: Double)]) -> Double? {
        guard let total = buckets.last?.count, total > 0 else { return nil }
        let rank = quantile * total
        var lower = 0.0
        var below = 0.0
        for (bound, count) in buckets {
            if count >= rank {
                guard bound.isFinite else { return lower }
                guard count > below else { return bound }
                return lower + (bound - lower) * (rank - below) / (count - below)
            }
            lower = bound.isFinite ? bound : lower
            below = count
        }
        return lower
    }

    /// Cumulative buckets `after` minus `before`, bound by bound (a bound missing before counts 0).
    package static func difference(_ after: [(bound: Double, count: Double)], _ before: [(bound: Double, count: Double)]) -> [(bound: Double, count: Double)] {
        let earlier = Dictionary(before.map { ($0.bound, $0.count) }, uniquingKeysWith: +)
        return after.map { ($0.bound, $0.count - (earlier[$0.bound] ?? 0)) }
    }

    /// One sample line, or nil for a comment, a blank or a line it cannot read.
    static func sample(_ line: String) -> Sample? {
        guard let first = line.first, first != "#" else { return nil }
        var labels: [String: String] = [:]
        let name: Substring
        let rest: Substring
        if let brace = line.firstIndex(of: "{") {
            name = line[..<brace]
            var index = line.index(after: brace)
            while index < line.endIndex, line[index] != "}" {
                guard let equals = line[index...].firstIndex(of: "="), line.index(after: equals) < line.endIndex,
                      line[line.index(after: equals)] == "\"" else { return nil }
                let key = line[index..<equals]
                var value = ""
                var cursor = line.index(equals, offsetBy: 2)
                while cursor < line.endIndex, line[cursor] != "\"" {
                    if line[cursor] == "\\", line.index(after: cursor) < line.endIndex {
                        cursor = line.index(after: cursor)
                        value.append(line[cursor] == "n" ? "\n" : line[cursor])
                    } else {
                        value.append(line[cursor])
                    }
                    cursor = line.index(after: cursor)
                }
                guard cursor < line.endIndex else { return nil }
                labels[String(key)] = value
                index = line.index(after: cursor)
                if index < line.endIndex, line[index] == "," { index = line.index(after: index) }
            }
            guard index < line.endIndex else { return nil }
            rest = line[line.index(after: index)...]
        } else {
            guard let space = line.firstIndex(of: " ") else { return nil }
            name = line[..<space]
            rest = line[space...]
        }
        let fields = rest.split(separator: " ")
        guard let number = fields.first, let value = Double(number) ?? (number == "+Inf" ? .infinity : nil) else { return nil }
        return Sample(name: String(name), labels: labels, value: value)
    }
}
