import GroveWire
import ZeroMQ

/// The metrics endpoint: HTTP requests on a ZeroMQ STREAM socket (raw TCP), answered from
/// ``CoordinatorMetrics`` on the I/O thread, so a scrape reads the core's counts without a lock.
extension CoordinatorDriver {
    /// `[peer, bytes]` from the STREAM socket: what ``ScrapeConnections`` says is done here.
    func serveMetrics(_ frames: [[UInt8]], io: LoopIO) {
        guard frames.count == 2, metrics != nil else { return }
        if let action = scrapes.received(peer: frames[0], bytes: frames[1], now: io.now) {
            perform(action, io: io)
        }
    }

    /// At each tick: scrape connections past their deadline are closed.
    func expireScrapes(io: LoopIO) {
        guard metrics != nil else { return }
        for action in scrapes.expire(now: io.now) { perform(action, io: io) }
    }

    private func perform(_ action: ScrapeConnections.Action, io: LoopIO) {
        switch action {
        case .answer(let peer, let request):
            let now = io.now
            // A topology that asks for tokens gets no scrape served before its check is set.
            let authorize = scrapeAuthorizer ?? (requireScrapeToken ? Self.noTokenCheck : nil)
            let response = MetricsHTTP.response(to: request, authorize: authorize, body: { renderedMetrics(now: now) })
            io.send(metricsSocket, [peer, response ?? MetricsHTTP.timedOut])
            io.send(metricsSocket, [peer, []])
        case .reply(let peer, let bytes):
            io.send(metricsSocket, [peer, bytes])
            io.send(metricsSocket, [peer, []])
        case .close(let peer):
            io.send(metricsSocket, [peer, []])
        }
    }

    /// The text of the metrics, rendered again only when the last rendering is older than
    /// ``renderReuse``: rendering runs on the routing thread and grows with the series (up to
    /// 10,000), so scrapes in a flood share one rendering instead of each taking its own.
    func renderedMetrics(now: ContinuousClock.Instant) -> [UInt8] {
        if let last = lastRendering, now < last.at + Self.renderReuse { return last.text }
        let text = metrics!.render(core.counts)
        lastRendering = (now, text)
        return text
    }

    /// What a scrape gets while the topology asks for tokens and nothing checks them yet.
    static let noTokenCheck: MetricsHTTP.Authorizer = { _ in
        .unauthenticated("this coordinator asks for scrape tokens (metrics.requireToken) and has no check of them set up yet; "
            + "an app that embeds it calls requireScrapeTokens")
    }

    private var requireScrapeToken: Bool { core.topology.metrics.requireToken }

    /// How long one rendering answers scrapes: far below any scrape interval.
    static let renderReuse: Duration = .milliseconds(250)

    /// A worker's heartbeat carried what it counted: added when metrics are on, else ignored.
    /// What is refused is logged, each distinct reason once (a worker that keeps sending it
    /// would otherwise write a line per heartbeat); the rest of the report is taken.
    func noteMetrics(_ report: [UInt8], from worker: String) {
        guard let metrics else { return }
        // Bounds before work: decoding runs on the routing thread, and a worker's real report
        // (its machine types' and request types' series) is a few kilobytes.
        guard report.count <= Self.reportLimit else {
            warnOnce("worker \(worker)'s metrics report (its heartbeat's payload) is \(report.count) bytes, more than \(Self.reportLimit); "
                + "nothing of it was counted (docs/PROTOCOL.md, \"Heartbeats\")")
            return
        }
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
    /// The largest metrics report decoded.
    static let reportLimit = 1 << 20
}
