import Foundation
import GroveClient
import GroveCluster
#if canImport(Glibc)
import Glibc
#endif

/// The topology's own figures for one run, from its Prometheus endpoint scraped before and
/// after (docs/ARCHITECTURE.md, "Metrics"): what the coordinator and the workers counted,
/// printed beside fsm-load's own counts so either can be checked against the other.
struct TopologyFigures: Codable, Sendable, Equatable {
    /// Requests the coordinator forwarded to workers, and replies it passed on.
    var routed: Int
    var replies: Int
    var busy: Int
    var repliesDropped: Int
    /// Events the workers handed to instances, by worker (summed over machine types).
    var workerEvents: [String: Int]
    /// Transitions timed on the workers, all machine types and workers together.
    var transitions: Int
    /// Their p50 and p99, estimated from the histogram's buckets as Prometheus'
    /// `histogram_quantile` does (linear within a bucket), in microseconds.
    var transitionMicros: [String: Double]

    init(before: MetricsText, after: MetricsText) {
        func delta(_ name: String) -> Int { Int(after.sum(name) - before.sum(name)) }
        routed = delta("grove_coordinator_requests_routed_total")
        replies = delta("grove_coordinator_replies_total")
        busy = delta("grove_coordinator_busy_total")
        repliesDropped = delta("grove_coordinator_replies_dropped_total")
        let earlier = before.sum("grove_worker_events_total", by: "worker")
        workerEvents = after.sum("grove_worker_events_total", by: "worker").mapValues(Int.init)
        for (worker, count) in earlier { workerEvents[worker, default: 0] -= Int(count) }
        workerEvents = workerEvents.filter { $0.value != 0 }
        let name = "grove_worker_transition_seconds"
        let buckets = MetricsText.difference(after.buckets(name), before.buckets(name))
        transitions = Int(buckets.last?.count ?? 0)
        transitionMicros = [:]
        for (label, quantile) in [("p50", 0.5), ("p99", 0.99)] {
            if let seconds = MetricsText.quantile(quantile, of: buckets) { transitionMicros[label] = (seconds * 1e7).rounded() / 10 }
        }
    }

    /// Whether the workers' figures have caught up with `acknowledged` events (they come with
    /// heartbeats, a quarter second apart by default).
    func caughtUp(with acknowledged: Int) -> Bool {
        workerEvents.values.reduce(0, +) >= acknowledged && transitions >= acknowledged
    }

    var text: String {
        let workers = workerEvents.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let times = ["p50", "p99"].compactMap { label in transitionMicros[label].map { String(format: "%@ %.1f µs", label, $0) } }
        return "routed \(routed), replies \(replies), busy \(busy), reply-dropped \(repliesDropped); worker events "
            + (workers.isEmpty ? "none" : workers) + "; transitions \(transitions)" + (times.isEmpty ? "" : ", " + times.joined(separator: ", "))
    }
}

/// `GET` of a metrics endpoint (`http://127.0.0.1:9464/metrics`) over a plain TCP socket, with
/// a 5-second receive timeout: the coordinator answers with `Connection: close`.
enum MetricsScrape {
    static func get(_ url: String) throws -> MetricsText {
        guard url.hasPrefix("http://") else { throw LoadError("--metrics \(url): not an http:// URL") }
        let rest = url.dropFirst("http://".count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        guard let colon = authority.lastIndex(of: ":"), let port = UInt16(authority[authority.index(after: colon)...]),
              inet_addr(String(authority[..<colon])) != INADDR_NONE else {
            throw LoadError("--metrics \(url): give an IPv4 address and a port, like http://127.0.0.1:9464/metrics")
        }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LoadError("metrics \(url): socket failed (errno \(errno))") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr(String(authority[..<colon]))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw LoadError("metrics \(url): cannot connect (errno \(errno)); is metrics.listen set in the topology?") }
        let path = slash == rest.endIndex ? "/metrics" : String(rest[slash...])
        let request = Array("GET \(path) HTTP/1.1\r\nHost: \(authority)\r\nConnection: close\r\n\r\n".utf8)
        guard send(fd, request, request.count, 0) == request.count else { throw LoadError("metrics \(url): send failed (errno \(errno))") }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            response += buffer[..<count]
        }
        let text = String(decoding: response, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 200"), let body = text.range(of: "\r\n\r\n") else {
            throw LoadError("metrics \(url) answered: \(text.prefix(120).split(separator: "\r\n").first ?? "nothing")")
        }
        return MetricsText(String(text[body.upperBound...]))
    }
}
