import GroveCluster
import GroveWire
import Testing
@testable import GroveView

/// The live view's plots, read from the coordinator's metrics text: no sockets, no clock.
@Suite(.timeLimit(.minutes(2)))
struct ViewMetricsTests {
    /// What two workers' counters and a transition histogram render as, with `events` events in
    /// all and `slow` of them in the bucket up to 500 µs (the rest up to 2.5 µs).
    static func text(events: Int, slow: Int, mailbox: Int = 0, restarts: Int = 0) -> MetricsText {
        MetricsText("""
            # TYPE grove_worker_events_total counter
            grove_worker_events_total{machine_type="Counter",worker="bench-1"} \(events / 2)
            grove_worker_events_total{machine_type="Counter",worker="bench-2"} \(events - events / 2)
            grove_worker_mailbox_depth{machine_type="Counter",worker="bench-1"} \(mailbox)
            grove_worker_restarts_total{worker="bench-1"} \(restarts)
            grove_worker_transition_seconds_bucket{machine_type="Counter",worker="bench-1",le="2.5e-06"} \(events - slow)
            grove_worker_transition_seconds_bucket{machine_type="Counter",worker="bench-1",le="0.0005"} \(events)
            grove_worker_transition_seconds_bucket{machine_type="Counter",worker="bench-1",le="+Inf"} \(events)
            """)
    }

    static func figures(_ update: ViewCore.Update) -> [String: JSONValue] {
        guard case .array(let series)? = update.json.objectValue?["series"] else { return [:] }
        return Dictionary(uniqueKeysWithValues: series.compactMap { figure in
            figure.objectValue.flatMap { object in object["id"]?.stringValue.map { ($0, object["value"] ?? .null) } }
        })
    }

    @Test func ratesAndQuantilesAreOverTheLastIntervalAndValuesAsTheyStand() {
        var metrics = ViewMetrics()
        let first = metrics.take(Self.text(events: 1_000, slow: 0, mailbox: 3, restarts: 1), now: 10_000)
        #expect(first.everyMachine)
        #expect(first.address == nil)
        // Nothing to take a rate or a quantile against yet; gauges and totals as they stand.
        #expect(Self.figures(first)["events"] == .null)
        #expect(Self.figures(first)["transition-p99"] == .null)
        #expect(Self.figures(first)["mailbox"] == .number(3))
        #expect(Self.figures(first)["restarts"] == .number(1))
        // 2 s later, 4,000 more events, 100 of them slow: 2,000 events/s, p99 among the slow.
        let second = Self.figures(metrics.take(Self.text(events: 5_000, slow: 100), now: 12_000))
        #expect(second["events"] == .number(2_000))
        guard case .number(let p99)? = second["transition-p99"] else {
            Issue.record("no p99: \(String(describing: second["transition-p99"]))")
            return
        }
        #expect(p99 > 2.5 && p99 <= 500, "p99 \(p99) µs")
        // Nothing ran since: a rate of 0, no quantile (no samples in the interval).
        let idle = Self.figures(metrics.take(Self.text(events: 5_000, slow: 100), now: 14_000))
        #expect(idle["events"] == .number(0))
        #expect(idle["transition-p99"] == .null)
        // Every figure the page plots comes, in order, with its label.
        guard case .array(let series)? = metrics.take(MetricsText(""), now: 16_000).json.objectValue?["series"] else {
            Issue.record("no series")
            return
        }
        #expect(series.compactMap { $0.objectValue?["id"]?.stringValue } == ViewMetrics.series.map(\.id))
    }

    @Test func aClockThatWentBackGivesNoRateRatherThanANegativeOne() {
        var metrics = ViewMetrics()
        _ = metrics.take(Self.text(events: 100, slow: 0), now: 10_000)
        #expect(Self.figures(metrics.take(Self.text(events: 200, slow: 0), now: 9_000))["events"] == .null)
    }

    @Test func onlyAViewerThatReadsEveryMachineSeesTheMetrics() {
        let everything = ViewAccess.Viewer(grants: [Topology.ClientGrant(key: "ops", roles: [.read])], name: "ops")
        let some = ViewAccess.Viewer(grants: [Topology.ClientGrant(key: "eu", roles: [.read, .send], machines: ["counter/eu-*"])], name: "eu")
        let sender = ViewAccess.Viewer(grants: [Topology.ClientGrant(key: "tx", roles: [.send])], name: "tx")
        #expect(everything.readsEveryMachine)
        #expect(!some.readsEveryMachine)
        #expect(!sender.readsEveryMachine)
    }
}
