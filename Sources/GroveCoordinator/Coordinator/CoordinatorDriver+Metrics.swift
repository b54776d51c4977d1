import GroveWire
import ZeroMQ

/// The metrics endpoint: HTTP requests on a ZeroMQ STREAM socket (raw TCP), answered from
/// ``CoordinatorMetrics`` on the I/O thread, so a scrape reads the core's counts without a lock.
extension CoordinatorDriver {
    /// Scrape connections waiting for the rest of their request head; more are closed at once.
    static let scrapeConnectionLimit = 64

    /// `[peer, bytes]` from the STREAM socket: an empty frame when a connection opens or closes.
    func serveMetrics(_ frames: [[UInt8]], io: LoopIO) {
        guard frames.count == 2, let metrics else { return }
        let peer = frames[0]
        guard !frames[1].isEmpty else {
            scrapes[peer] = nil
            return
        }
        guard scrapes[peer] != nil || scrapes.count < Self.scrapeConnectionLimit else {
            io.send(metricsSocket, [peer, []])
            return
        }
        var request = scrapes[peer, default: []]
        request += frames[1]
        let counts = core.counts
        guard let response = MetricsHTTP.response(to: request, body: { metrics.render(counts) }) else {
            scrapes[peer] = request
            return
        }
        scrapes[peer] = nil
        io.send(metricsSocket, [peer, response])
        io.send(metricsSocket, [peer, []])
    }

    /// A worker's heartbeat carried what it counted: added when metrics are on, else ignored.
    /// What is refused is logged, each distinct reason once (a worker that keeps sending it
    /// would otherwise write a line per heartbeat); the rest of the report is taken.
    func noteMetrics(_ report: [UInt8], from worker: String) {
        guard let metrics else { return }
        guard let decoded = WireJSON.decodeQuickly(MetricsReport.self, from: report) else {
            warnOnce("worker \(worker)'s metrics report (its heartbeat's payload) is not the JSON docs/PROTOCOL.md \"Heartbeats\" describes; "
                + "nothing of it was counted: check the worker's Grove version")
            return
        }
        for problem in metrics.add(decoded, from: worker) {
            warnOnce("worker \(worker)'s metrics report was refused in part: \(problem); that part was not counted (docs/PROTOCOL.md, \"Heartbeats\")")
        }
    }

    /// Logs `message` at warning unless it was logged already; after ``warnedLimit`` distinct
    /// messages, nothing more.
    private func warnOnce(_ message: String) {
        guard metricsWarned.count < Self.warnedLimit, metricsWarned.insert(message).inserted else { return }
        log.warning("\(message)")
    }

    static let warnedLimit = 64
}
