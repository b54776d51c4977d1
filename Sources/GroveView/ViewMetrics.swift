package import GroveCluster
package import GroveWire

/// The live view's small plots (issue 38, item 3): a few figures of the topology's metrics, read
/// from the coordinator's own rendering (what a scrape of `metrics.listen` gets) every
/// ``interval``, as rates and quantiles over the last interval. Pure: the text and the time come
/// in; its updates go only to viewers whose grants read every machine, as a scrape needs
/// (``ViewAccess/Viewer/readsEveryMachine``).
package struct ViewMetrics: Sendable {
    /// Milliseconds between two readings.
    package static let interval: Int64 = 2_000

    /// One plotted figure: its id on the page, what it shows and how it is made.
    package struct Series: Sendable, Equatable {
        package var id: String
        package var label: String
        package var figure: Figure
    }

    package enum Figure: Sendable, Equatable {
        /// Per second: a counter's increase over the interval (every worker and label summed).
        case rate(String)
        /// A histogram's quantile over the interval, times `scale` (1e6: µs).
        case quantile(String, Double, scale: Double)
        /// A gauge, or a counter's total, as it stands.
        case value(String)
    }

    package static let series: [Series] = [
        Series(id: "events", label: "events/s", figure: .rate("grove_worker_events_total")),
        Series(id: "transition-p99", label: "transition p99 µs", figure: .quantile(HistogramBounds.transitionSeconds, 0.99, scale: 1e6)),
        Series(id: "mailbox", label: "mailbox depth", figure: .value("grove_worker_mailbox_depth")),
        Series(id: "io-calls", label: "io calls/s", figure: .rate("grove_worker_io_calls_total")),
        Series(id: "io-p99", label: "io call p99 ms", figure: .quantile(HistogramBounds.ioCallSeconds, 0.99, scale: 1e3)),
        Series(id: "commit-p99", label: "store commit p99 ms", figure: .quantile(HistogramBounds.storeCommitSeconds, 0.99, scale: 1e3)),
        Series(id: "busy", label: "busy/s", figure: .rate("grove_coordinator_busy_total")),
        Series(id: "reply-dropped", label: "replies dropped/s", figure: .rate("grove_coordinator_replies_dropped_total")),
        Series(id: "restarts", label: "worker restarts", figure: .value("grove_worker_restarts_total")),
        Series(id: "quarantines", label: "quarantines", figure: .value("grove_coordinator_quarantines_total")),
    ]

    private var last: (at: Int64, text: MetricsText)?

    package init() {}

    /// The figures of `text`, read at `now` (milliseconds): rates and quantiles against the
    /// last reading (none the first time, or when the clock went back), values as they stand.
    package mutating func take(_ text: MetricsText, now: Int64) -> ViewCore.Update {
        let before = last.flatMap { $0.at < now ? $0 : nil }
        last = (now, text)
        let figures: [JSONValue] = Self.series.map { series in
            let value: Double? = switch series.figure {
            case .rate(let name):
                before.map { max(0, text.sum(name) - $0.text.sum(name)) * 1000 / Double(now - $0.at) }
            case .quantile(let name, let quantile, let scale):
                before.flatMap { MetricsText.quantile(quantile, of: MetricsText.difference(text.buckets(name), $0.text.buckets(name))) }
                    .map { $0 * scale }
            case .value(let name):
                text.sum(name)
            }
            return .object(["id": .string(series.id), "label": .string(series.label), "value": value.map(JSONValue.number) ?? .null])
        }
        return ViewCore.Update(address: nil, json: .object(["type": .string("metrics"), "at": .integer(now), "series": .array(figures)]),
                               everyMachine: true)
    }
}
